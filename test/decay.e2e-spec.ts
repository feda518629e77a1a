import { Client } from 'pg';
import { Clock } from '../src/common/clock';
import { DECAY_FLOOR, MemoryDecayService } from '../src/memories/memory-decay.service';
import { makeMemory, makeProfile } from './support/factories';
import { useTestApp } from './support/test-app';
import { describeOn } from './support/databases';

const DAY_MS = 86_400_000;

/** The daily decay of memories, with the clock moved instead of waiting days. */
describe('memory decay', () => {
  const t = useTestApp();
  let decay: MemoryDecayService;
  let now: jest.SpyInstance<Date, []>;
  let createdAt: number;
  let profileId: string;

  beforeAll(() => {
    decay = t.app.get(MemoryDecayService);
    now = jest.spyOn(t.app.get(Clock), 'now');
  });

  beforeEach(async () => {
    profileId = (await makeProfile(t)).id;
    createdAt = Date.now();
    now.mockReturnValue(new Date(createdAt));
  });

  afterAll(() => {
    now.mockRestore();
  });

  /** Runs the job as if it were `days` days after the test began. */
  async function runAt(days: number): Promise<void> {
    now.mockReturnValue(new Date(createdAt + days * DAY_MS));
    await decay.decay();
  }

  async function decayFactor(memoryId: string): Promise<number> {
    const res = await t.api().get(`/api/profiles/${profileId}/memories?limit=100`).expect(200);
    return res.body.memories.find((memory: { id: string }) => memory.id === memoryId).decayFactor;
  }

  it('multiplies by 0.95 per full unused day, once per day however often it runs', async () => {
    const memory = await makeMemory(t, profileId);
    await runAt(0.9);
    expect(await decayFactor(memory.id)).toBe(1);
    await runAt(1.01);
    expect(await decayFactor(memory.id)).toBeCloseTo(0.95, 6);
    await runAt(1.5);
    await runAt(1.9);
    expect(await decayFactor(memory.id)).toBeCloseTo(0.95, 6);
    await runAt(4.01); // two runs missed: caught up
    expect(await decayFactor(memory.id)).toBeCloseTo(0.95 ** 4, 5);
  });

  it('never goes below the floor', async () => {
    const memory = await makeMemory(t, profileId);
    await runAt(100.01);
    expect(await decayFactor(memory.id)).toBeCloseTo(DECAY_FLOOR, 6);
    await runAt(200.01);
    expect(await decayFactor(memory.id)).toBeCloseTo(DECAY_FLOOR, 6);
  });

  it('does not count the time before a memory was last used', async () => {
    const used = await makeMemory(t, profileId, { content: 'used' });
    const unused = await makeMemory(t, profileId, { content: 'unused' });
    await t.dataSource.query(`UPDATE memories SET last_accessed_at = $2 WHERE id = $1`, [
      used.id,
      new Date(createdAt + 3 * DAY_MS),
    ]);
    await runAt(3.5);
    expect(await decayFactor(used.id)).toBe(1);
    expect(await decayFactor(unused.id)).toBeCloseTo(0.95 ** 3, 5);
    await runAt(5.6); // two full days since its last use
    expect(await decayFactor(used.id)).toBeCloseTo(0.95 ** 2, 5);
  });

  it('starts again from 1 when the memory is met again, and ranks decayed memories lower', async () => {
    const old = await makeMemory(t, profileId, { content: 'I have two kids', importance: 0.6 });
    await runAt(10.01);
    expect(await decayFactor(old.id)).toBeCloseTo(0.95 ** 10, 5);
    const fresh = await makeMemory(t, profileId, { content: 'I like tea', importance: 0.5 });
    const list = await t.api().get(`/api/profiles/${profileId}/memories`).expect(200);
    expect(list.body.memories.map((memory: { id: string }) => memory.id)).toEqual([fresh.id, old.id]);

    await t
      .api()
      .post(`/api/profiles/${profileId}/memories`)
      .send({ content: 'I have two kids.', type: 'fact' })
      .expect(200);
    expect(await decayFactor(old.id)).toBe(1);
    await runAt(10.5);
    expect(await decayFactor(old.id)).toBe(1);
    await runAt(11.02);
    expect(await decayFactor(old.id)).toBeCloseTo(0.95, 5);
  });
});

describeOn('postgres', 'memory decay run by two replicas at once', () => {
  const t = useTestApp();
  let other: Client;

  beforeAll(async () => {
    other = new Client({ connectionString: process.env.DATABASE_URL });
    await other.connect();
  });

  afterAll(async () => {
    await other.end();
  });

  it('counts each day once although both runs saw the memory due', async () => {
    const profile = await makeProfile(t);
    const memory = await makeMemory(t, profile.id);
    await t.dataSource.query(`UPDATE memories SET created_at = now() - interval '25 hours' WHERE id = $1`, [
      memory.id,
    ]);
    // Both runs read the memory as due, then wait for this lock: they overlap for certain.
    await other.query('BEGIN');
    await other.query('SELECT id FROM memories WHERE id = $1 FOR UPDATE', [memory.id]);
    const decay = t.app.get(MemoryDecayService);
    const runs = Promise.all([decay.decay(), decay.decay()]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await other.query('ROLLBACK');
    const updated = await runs;
    expect(updated[0] + updated[1]).toBe(1);
    const [row] = await t.dataSource.query(`SELECT decay_factor FROM memories WHERE id = $1`, [memory.id]);
    expect(row.decay_factor).toBeCloseTo(0.95, 6);
  });
});
