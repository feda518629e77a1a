import { LooseJson } from './support/fake-openai-upstream';
import { makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';

/** A small seeded generator (mulberry32), so that a failing sequence can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Kind {
  trait: string;
  values: string[];
  /** As the user says it (learnt by ingest), and as an operator writes it through the API. */
  said: (value: string) => string;
  written: (value: string) => string;
  /** The value a memory's content states, when it states one of this kind. */
  valueOf: (content: string) => string | undefined;
}

const KINDS: Kind[] = [
  {
    trait: 'location',
    values: ['Paris', 'Berlin', 'Lisbon', 'Porto', 'Oslo'],
    said: (value) => `I live in ${value}.`,
    written: (value) => `Lives in ${value}`,
    valueOf: (content) => /\blives in (\w+)/i.exec(content)?.[1],
  },
  {
    trait: 'employer',
    values: ['Acme', 'Globex', 'Initech', 'Umbrella'],
    said: (value) => `I work at ${value}.`,
    written: (value) => `Works at ${value}`,
    valueOf: (content) => /\bworks at (\w+)/i.exec(content)?.[1],
  },
];

const STEPS = 30;
const SEEDS = [35, 3535];

/**
 * Random sequences of add (through the API), say again (a statement made before, through ingest or the
 * API), supersede (a new value said), delete (any memory of a kind, current or not) and revert (a trait
 * set back to an earlier value) over two single-valued fact kinds. After every step: exactly one current
 * memory per kind that has a memory, `supersededAt` only with `supersededBy`, and the injected context
 * names no value of a kind but its current memory's and its trait's.
 */
describe('Fact chains under random changes (property)', () => {
  const t = useTestApp({ env: { EXTRACTOR: 'heuristic', LOG_LEVEL: 'error' } });

  const api = () => t.admin();

  for (const seed of SEEDS) {
    it(`keeps one current fact per kind and injects nothing replaced (seed ${seed})`, async () => {
      const next = random(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
      const profile = await makeProfile(t, `fact-chains-${seed}`);
      const path = `/api/profiles/${profile.id}`;
      const said: Array<{ kind: Kind; value: string }> = [];
      const log: string[] = [];

      const all = async () =>
        (await api().get(`${path}/memories?include=superseded&limit=100`).expect(200)).body
          .memories as LooseJson[];
      const ofKind = (memories: LooseJson[], kind: Kind) =>
        memories.filter((memory) => kind.valueOf(memory.content) !== undefined);

      const steps: Record<string, () => Promise<void>> = {
        add: async () => {
          const kind = pick(KINDS);
          const value = pick(kind.values);
          said.push({ kind, value });
          log.push(`add ${kind.written(value)}`);
          await api()
            .post(`${path}/memories`)
            .send({ content: kind.written(value), type: 'fact' });
        },
        sayAgain: async () => {
          if (said.length === 0) return;
          const { kind, value } = pick(said);
          const byApi = next() < 0.5;
          log.push(`say again ${value} (${byApi ? 'api' : 'ingest'})`);
          if (byApi)
            await api()
              .post(`${path}/memories`)
              .send({ content: kind.written(value), type: 'fact' });
          else
            await api()
              .post(`${path}/ingest`)
              .send({ data: kind.said(value) })
              .expect(200);
        },
        supersede: async () => {
          const kind = pick(KINDS);
          const value = pick(kind.values);
          said.push({ kind, value });
          log.push(`say ${kind.said(value)}`);
          await api()
            .post(`${path}/ingest`)
            .send({ data: kind.said(value) })
            .expect(200);
        },
        delete: async () => {
          const memories = await all();
          if (memories.length === 0) return;
          const memory = pick(memories);
          log.push(`delete ${memory.content}${memory.supersededAt === null ? ' (current)' : ''}`);
          await api().delete(`${path}/memories/${memory.id}`).expect(200);
        },
        revert: async () => {
          const kind = pick(KINDS);
          const res = await api().get(`${path}/traits/${kind.trait}/history`);
          if (res.status !== 200) return;
          const entry = pick(res.body.history as LooseJson[]);
          log.push(`revert ${kind.trait} to ${JSON.stringify(entry.newValue ?? entry.oldValue)}`);
          await api().post(`${path}/traits/${kind.trait}/revert`).send({ historyId: entry.id });
        },
      };

      for (let step = 0; step < STEPS; step++) {
        await steps[pick(Object.keys(steps))]();
        const memories = await all();
        const traits = (await api().get(`${path}/traits`).expect(200)).body.traits as LooseJson[];
        const text = (
          await api()
            .post(`${path}/context`)
            .send({ question: 'Where do I live and where do I work?' })
            .expect(200)
        ).body.text as string;
        const where = `seed ${seed}, after: ${log.join('; ')}`;
        for (const memory of memories) {
          expect({
            where,
            linked: (memory.supersededBy === null) === (memory.supersededAt === null),
          }).toEqual({
            where,
            linked: true,
          });
        }
        for (const kind of KINDS) {
          const current = ofKind(memories, kind).filter((memory) => memory.supersededAt === null);
          const expected = ofKind(memories, kind).length === 0 ? 0 : 1;
          expect({ where, kind: kind.trait, current: current.length }).toEqual({
            where,
            kind: kind.trait,
            current: expected,
          });
          const allowed = new Set<string>(current.map((memory) => kind.valueOf(memory.content)!));
          const trait = traits.find((candidate) => candidate.key === kind.trait);
          if (trait) allowed.add(String(trait.value));
          const injected = kind.values.filter((value) => new RegExp(`\\b${value}\\b`).test(text));
          expect({
            where,
            kind: kind.trait,
            injected: injected.filter((value) => !allowed.has(value)),
          }).toEqual({
            where,
            kind: kind.trait,
            injected: [],
          });
        }
      }
    });
  }
});
