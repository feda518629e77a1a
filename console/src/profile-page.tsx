import { useState } from 'preact/hooks';
import { type Access, may } from './access';
import { api, call, type Schemas } from './api';
import {
  Confirm,
  CursorPager,
  ErrorNote,
  formatDate,
  go,
  Loading,
  Section,
  showValue,
  useAction,
  useCursorPages,
  useLoad,
} from './ui';

const MEMORY_PAGE_SIZE = 20;
const TURN_PAGE_SIZE = 10;

type Params = { params: { path: { id: string } } };

/** Everything the service knows about one user, each part loaded and paged on its own. */
export function ProfilePage({ id, access }: { id: string; access: Access }) {
  const path: Params = { params: { path: { id } } };
  const profile = useLoad(() => call(api.GET('/api/profiles/{id}', path)), [id]);
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  if (profile.error) return <ErrorNote error={profile.error} />;
  if (!profile.data) return <Loading what="the profile" />;
  const data = profile.data.profile;
  const name = data.externalId ?? data.id;
  return (
    <>
      <div class="card-head">
        <h1>
          <span class="muted">User</span> {name}
        </h1>
        <ProfileActions id={id} name={name} access={access} />
      </div>
      <p class="muted">
        Internal id {data.id} · created {formatDate(data.createdAt)}
      </p>
      <Summary id={id} summary={data.summary} access={access} onChange={profile.reload} />
      <Learning id={id} access={access} version={version} />
      <Ask id={id} />
      <Traits id={id} access={access} version={version} />
      <Memories id={id} access={access} version={version} onChange={changed} />
      <Turns id={id} version={version} />
    </>
  );
}

function ProfileActions({ id, name, access }: { id: string; name: string; access: Access }) {
  const action = useAction();
  const [counts, setCounts] = useState<Schemas['ProfileCountsDto'] | null>(null);
  const exportJson = () =>
    action.run(async () => {
      const data = await call(api.GET('/api/profiles/{id}/export', { params: { path: { id } } }));
      const url = URL.createObjectURL(
        new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }),
      );
      const link = document.createElement('a');
      link.href = url;
      link.download = `profile-${name}.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  const askErase = () =>
    action.run(async () => {
      const page = await call(api.GET('/api/profiles', { params: { query: { search: name, limit: 100 } } }));
      const found = page.profiles.find((p) => p.id === id || p.externalId === id);
      setCounts(found?.counts ?? { traits: 0, memories: 0, messages: 0, pending: 0, failed: 0 });
    });
  const erase = () =>
    action.run(async () => {
      const { deleted } = await call(api.DELETE('/api/profiles/{id}', { params: { path: { id } } }));
      setCounts(null);
      const words = `Erased ${name}: ${deleted.traits} traits, ${deleted.memories} memories, ${deleted.messages} messages.`;
      go(`#/profiles?${new URLSearchParams({ erased: words }).toString()}`);
    });
  return (
    <div class="row">
      <button type="button" onClick={() => void exportJson()} disabled={action.busy}>
        Export JSON
      </button>
      {may(access, access.tenancy ? 'admin' : 'write') && (
        <button type="button" class="danger" onClick={() => void askErase()} disabled={action.busy}>
          Erase…
        </button>
      )}
      <ErrorNote error={action.error} />
      {counts && (
        <Confirm
          title={`Erase ${name}?`}
          confirmLabel={`Erase ${name} for good`}
          onConfirm={() => void erase()}
          onCancel={() => setCounts(null)}
        >
          <p>
            This deletes the profile of <strong>{name}</strong> with its {counts.traits} traits,{' '}
            {counts.memories} memories and {counts.messages} messages. It cannot be undone.
          </p>
        </Confirm>
      )}
    </div>
  );
}

function Summary(props: { id: string; summary: string; access: Access; onChange: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const action = useAction();
  const save = (summary: string) =>
    action.run(async () => {
      await call(api.PATCH('/api/profiles/{id}', { params: { path: { id: props.id } }, body: { summary } }));
      setEditing(null);
      props.onChange();
    });
  const canWrite = may(props.access, 'write');
  return (
    <Section title="Summary" id="summary">
      {editing === null ? (
        <>
          <p class="prose">{props.summary || <span class="muted">No summary yet.</span>}</p>
          {canWrite && (
            <div class="row">
              <button type="button" onClick={() => setEditing(props.summary)}>
                Edit summary
              </button>
              <button type="button" onClick={() => void save('')} disabled={action.busy}>
                Hand back to automatic
              </button>
            </div>
          )}
        </>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void save(editing);
          }}
        >
          <label for="summary-text">Summary</label>
          <textarea
            id="summary-text"
            rows={4}
            value={editing}
            onInput={(e) => setEditing(e.currentTarget.value)}
          />
          <div class="row">
            <button type="submit" disabled={action.busy}>
              Save summary
            </button>
            <button type="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <ErrorNote error={action.error} />
    </Section>
  );
}

function Learning({ id, access, version }: { id: string; access: Access; version: number }) {
  const path = { params: { path: { id } } };
  const status = useLoad(() => call(api.GET('/api/profiles/{id}/extraction', path)), [id, version]);
  const action = useAction();
  const [requeued, setRequeued] = useState<number | null>(null);
  const state = status.data?.extraction;
  return (
    <Section title="Learning" id="learning">
      <ErrorNote error={status.error} />
      {state && (
        <p>
          {state.pending} messages to learn from ({state.backingOff} waiting after a failure), {state.failed}{' '}
          given up.
        </p>
      )}
      {state && state.failed > 0 && may(access, 'write') && (
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            void action.run(async () => {
              setRequeued((await call(api.POST('/api/profiles/{id}/extraction/retry', path))).requeued);
              status.reload();
            })
          }
        >
          Retry failed learning
        </button>
      )}
      {requeued !== null && <p role="status">{requeued} messages queued again.</p>}
      <ErrorNote error={action.error} />
    </Section>
  );
}

function Ask({ id }: { id: string }) {
  const [question, setQuestion] = useState('');
  const [answer, setAnswer] = useState<Schemas['ContextResponseDto'] | null>(null);
  const action = useAction();
  return (
    <Section title="Ask" id="ask">
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () =>
            setAnswer(
              await call(
                api.POST('/api/profiles/{id}/context', { params: { path: { id } }, body: { question } }),
              ),
            ),
          );
        }}
      >
        <label for="ask-question">Question</label>
        <input
          id="ask-question"
          value={question}
          onInput={(e) => setQuestion(e.currentTarget.value)}
          required
        />
        <button type="submit" disabled={action.busy || question.trim() === ''}>
          Show what would be injected
        </button>
      </form>
      <ErrorNote error={action.error} />
      {answer && (
        <div class="ask-answer" aria-live="polite">
          <h3>Memories injected</h3>
          {answer.memories.length === 0 ? (
            <p class="muted">No memory would be injected.</p>
          ) : (
            <ol class="injected-memories">
              {answer.memories.map((memory) => (
                <li key={memory.id}>
                  {memory.content} <span class="muted">score {memory.score.toFixed(3)}</span>
                </li>
              ))}
            </ol>
          )}
          <h3>Traits injected</h3>
          <p>{answer.traits.map((trait) => `${trait.key}: ${showValue(trait.value)}`).join(' · ') || '—'}</p>
          <details>
            <summary>The injected text</summary>
            <pre>{answer.text}</pre>
          </details>
        </div>
      )}
    </Section>
  );
}

function Traits({ id, access, version }: { id: string; access: Access; version: number }) {
  const traits = useLoad(
    () => call(api.GET('/api/profiles/{id}/traits', { params: { path: { id } } })),
    [id, version],
  );
  const [editing, setEditing] = useState<{ key: string; text: string } | null>(null);
  const [historyOf, setHistoryOf] = useState<string | null>(null);
  const action = useAction();
  const canWrite = may(access, 'write');
  const save = (key: string, text: string) =>
    action.run(async () => {
      await call(
        api.PUT('/api/profiles/{id}/traits/{key}', {
          params: { path: { id, key } },
          body: { value: parseValue(text) as Schemas['PutTraitDto']['value'] },
        }),
      );
      setEditing(null);
      traits.reload();
    });
  const remove = (key: string) =>
    action.run(async () => {
      await call(api.DELETE('/api/profiles/{id}/traits/{key}', { params: { path: { id, key } } }));
      traits.reload();
    });
  return (
    <Section title="Traits" id="traits">
      <ErrorNote error={traits.error ?? action.error} />
      {traits.data && traits.data.traits.length === 0 && <p class="muted">No traits.</p>}
      {traits.data && traits.data.traits.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Trait</th>
              <th scope="col">Value</th>
              <th scope="col">Confidence</th>
              <th scope="col">Source</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {traits.data.traits.map((trait) => (
              <tr key={trait.key} data-trait={trait.key}>
                <th scope="row">{trait.key}</th>
                <td>
                  {editing?.key === trait.key ? (
                    <form
                      class="row"
                      onSubmit={(event) => {
                        event.preventDefault();
                        void save(trait.key, editing.text);
                      }}
                    >
                      <label class="visually-hidden" for={`trait-${trait.key}`}>
                        New value of {trait.key}
                      </label>
                      <input
                        id={`trait-${trait.key}`}
                        value={editing.text}
                        onInput={(e) => setEditing({ key: trait.key, text: e.currentTarget.value })}
                      />
                      <button type="submit">Save</button>
                      <button type="button" onClick={() => setEditing(null)}>
                        Cancel
                      </button>
                    </form>
                  ) : (
                    <span class="trait-value">{showValue(trait.value)}</span>
                  )}
                </td>
                <td>{trait.confidence.toFixed(2)}</td>
                <td>{trait.source === 'manual' ? 'set by hand' : `learnt (${trait.source})`}</td>
                <td>{formatDate(trait.updatedAt)}</td>
                <td>
                  <div class="row">
                    {canWrite && (
                      <button
                        type="button"
                        aria-label={`Edit ${trait.key}`}
                        onClick={() => setEditing({ key: trait.key, text: showValue(trait.value) })}
                      >
                        Edit
                      </button>
                    )}
                    <button
                      type="button"
                      aria-label={`History of ${trait.key}`}
                      aria-expanded={historyOf === trait.key}
                      onClick={() => setHistoryOf(historyOf === trait.key ? null : trait.key)}
                    >
                      History
                    </button>
                    {canWrite && (
                      <button
                        type="button"
                        class="danger"
                        aria-label={`Delete ${trait.key}`}
                        onClick={() => void remove(trait.key)}
                      >
                        Delete
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {historyOf && (
        <TraitHistory
          id={id}
          traitKey={historyOf}
          canWrite={canWrite}
          onReverted={traits.reload}
          version={version}
        />
      )}
    </Section>
  );
}

/** A typed value as JSON (numbers, booleans, lists); anything else is text. */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A trait's history keeps the value with its confidence. */
function traitValue(stored: unknown): unknown {
  return stored !== null && typeof stored === 'object' && 'value' in stored ? stored.value : stored;
}

function TraitHistory(props: {
  id: string;
  traitKey: string;
  canWrite: boolean;
  onReverted: () => void;
  version: number;
}) {
  const path = { params: { path: { id: props.id, key: props.traitKey } } };
  const history = useLoad(
    () => call(api.GET('/api/profiles/{id}/traits/{key}/history', path)),
    [props.traitKey, props.version],
  );
  const action = useAction();
  return (
    <div class="history" aria-label={`History of ${props.traitKey}`} role="region">
      <h3>History of {props.traitKey}</h3>
      <ErrorNote error={history.error ?? action.error} />
      <ul>
        {history.data?.history.map((entry) => (
          <li key={entry.id}>
            {formatDate(entry.createdAt)}: {entry.change} by {entry.source},{' '}
            {entry.oldValue === null ? '' : `from ${showValue(traitValue(entry.oldValue))} `}
            {entry.newValue === null ? '' : `to ${showValue(traitValue(entry.newValue))}`}
            {props.canWrite && entry.newValue !== null && (
              <button
                type="button"
                onClick={() =>
                  void action.run(async () => {
                    await call(
                      api.POST('/api/profiles/{id}/traits/{key}/revert', {
                        ...path,
                        body: { historyId: entry.id },
                      }),
                    );
                    props.onReverted();
                    history.reload();
                  })
                }
              >
                Revert to {showValue(traitValue(entry.newValue))}
              </button>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

function Memories(props: { id: string; access: Access; version: number; onChange: () => void }) {
  const { id, access } = props;
  const [offset, setOffset] = useState(0);
  const [superseded, setSuperseded] = useState(false);
  const [historyOf, setHistoryOf] = useState<string | null>(null);
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const memories = useLoad(
    () =>
      call(
        api.GET('/api/profiles/{id}/memories', {
          params: {
            path: { id },
            query: {
              limit: MEMORY_PAGE_SIZE + 1,
              offset,
              ...(superseded ? { include: 'superseded' as const } : {}),
            },
          },
        }),
      ),
    [id, offset, superseded, props.version],
  );
  const action = useAction();
  const canWrite = may(access, 'write');
  const shown = memories.data?.memories.slice(0, MEMORY_PAGE_SIZE) ?? [];
  const more = (memories.data?.memories.length ?? 0) > MEMORY_PAGE_SIZE;
  const byId = new Map(shown.map((memory) => [memory.id, memory]));
  const path = (memoryId: string) => ({ params: { path: { id, memoryId } } });
  return (
    <Section
      title="Memories"
      id="memories"
      actions={
        <label class="row">
          <input
            type="checkbox"
            checked={superseded}
            onChange={(e) => {
              setSuperseded(e.currentTarget.checked);
              setOffset(0);
            }}
          />
          Show superseded memories
        </label>
      }
    >
      {canWrite && <Learn id={id} onLearnt={props.onChange} />}
      <ErrorNote error={memories.error ?? action.error} />
      {memories.loading && !memories.data && <Loading what="memories" />}
      {memories.data && shown.length === 0 && <p class="muted">No memories.</p>}
      <ul class="memories">
        {shown.map((memory) => (
          <li key={memory.id} data-memory={memory.id} class={memory.supersededAt ? 'superseded' : undefined}>
            {editing?.id === memory.id ? (
              <form
                class="row"
                onSubmit={(event) => {
                  event.preventDefault();
                  void action.run(async () => {
                    await call(
                      api.PATCH('/api/profiles/{id}/memories/{memoryId}', {
                        ...path(memory.id),
                        body: { content: editing.text },
                      }),
                    );
                    setEditing(null);
                    memories.reload();
                  });
                }}
              >
                <label class="visually-hidden" for={`memory-${memory.id}`}>
                  Memory text
                </label>
                <input
                  id={`memory-${memory.id}`}
                  value={editing.text}
                  onInput={(e) => setEditing({ id: memory.id, text: e.currentTarget.value })}
                />
                <button type="submit">Save</button>
                <button type="button" onClick={() => setEditing(null)}>
                  Cancel
                </button>
              </form>
            ) : (
              <p class="memory-content">{memory.content}</p>
            )}
            <p class="muted">
              {memory.type} · importance {memory.importance.toFixed(2)} · created{' '}
              {formatDate(memory.createdAt)} · last used {formatDate(memory.lastAccessedAt)}
            </p>
            {memory.supersededBy && (
              <p class="replaced">
                Superseded {formatDate(memory.supersededAt)} by:{' '}
                <Replacement
                  id={id}
                  memoryId={memory.supersededBy}
                  known={byId.get(memory.supersededBy)?.content}
                />
              </p>
            )}
            <div class="row">
              {canWrite && (
                <button type="button" onClick={() => setEditing({ id: memory.id, text: memory.content })}>
                  Edit
                </button>
              )}
              <button
                type="button"
                aria-expanded={historyOf === memory.id}
                onClick={() => setHistoryOf(historyOf === memory.id ? null : memory.id)}
              >
                History
              </button>
              {canWrite && (
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    void action.run(async () => {
                      await call(api.DELETE('/api/profiles/{id}/memories/{memoryId}', path(memory.id)));
                      memories.reload();
                    })
                  }
                >
                  Delete
                </button>
              )}
            </div>
            {historyOf === memory.id && <MemoryHistory id={id} memoryId={memory.id} />}
          </li>
        ))}
      </ul>
      <nav class="row" aria-label="Memory pages">
        <button
          type="button"
          disabled={offset === 0}
          onClick={() => setOffset(Math.max(0, offset - MEMORY_PAGE_SIZE))}
        >
          Previous memories
        </button>
        <button type="button" disabled={!more} onClick={() => setOffset(offset + MEMORY_PAGE_SIZE)}>
          Next memories
        </button>
      </nav>
    </Section>
  );
}

function Replacement({ id, memoryId, known }: { id: string; memoryId: string; known?: string }) {
  const replacement = useLoad(
    () =>
      known !== undefined
        ? Promise.resolve(known)
        : call(
            api.GET('/api/profiles/{id}/memories/{memoryId}', { params: { path: { id, memoryId } } }),
          ).then((r) => r.memory.content),
    [memoryId, known],
  );
  return (
    <span class="replacement">
      {replacement.data ?? (replacement.error ? 'a memory deleted since' : '…')}
    </span>
  );
}

function MemoryHistory({ id, memoryId }: { id: string; memoryId: string }) {
  const history = useLoad(
    () =>
      call(api.GET('/api/profiles/{id}/memories/{memoryId}/history', { params: { path: { id, memoryId } } })),
    [memoryId],
  );
  return (
    <div class="history">
      <ErrorNote error={history.error} />
      <ul>
        {history.data?.history.map((entry) => (
          <li key={entry.id}>
            {formatDate(entry.createdAt)}: {entry.change} by {entry.source}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Teaches the profile from a text now (the ingest route): what it says is learnt as from a chat. */
function Learn({ id, onLearnt }: { id: string; onLearnt: () => void }) {
  const [text, setText] = useState('');
  const [learnt, setLearnt] = useState<string | null>(null);
  const action = useAction();
  return (
    <form
      class="row"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const result = await call(
            api.POST('/api/profiles/{id}/ingest', { params: { path: { id } }, body: { data: text } }),
          );
          setLearnt(
            `Learnt ${result.extracted.memories.length} memories and ${result.extracted.traits.length} traits.`,
          );
          setText('');
          onLearnt();
        });
      }}
    >
      <label for="learn-text">Learn from text</label>
      <input id="learn-text" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit" disabled={action.busy || text.trim() === ''}>
        Learn
      </button>
      {learnt && <span role="status">{learnt}</span>}
      <ErrorNote error={action.error} />
    </form>
  );
}

function Turns({ id, version }: { id: string; version: number }) {
  const pages = useCursorPages();
  const cursor = pages.cursor;
  const turns = useLoad(
    () =>
      call(
        api.GET('/api/profiles/{id}/messages', {
          params: { path: { id }, query: { limit: TURN_PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [id, cursor, version],
  );
  return (
    <Section title="Recent turns" id="turns">
      <ErrorNote error={turns.error} />
      {turns.data && turns.data.turns.length === 0 && <p class="muted">No chat turns yet.</p>}
      <ol class="turns">
        {turns.data?.turns.map((turn) => (
          <li key={`${turn.requestId}-${turn.createdAt}`}>
            <p class="muted">
              {formatDate(turn.createdAt)} · {turn.model}
            </p>
            <p>
              <strong>User:</strong> {turn.said.join('\n')}
            </p>
            <p>
              <strong>Answer:</strong> {turn.answer}
            </p>
            {turn.injected ? (
              <p class="muted">
                Injected traits: {turn.injected.traits.join(', ') || 'none'}; memories:{' '}
                {turn.injected.memories.map((m) => m.content ?? '(deleted since)').join(' · ') || 'none'}
              </p>
            ) : (
              <p class="muted">What was injected was not recorded for this turn.</p>
            )}
          </li>
        ))}
      </ol>
      <CursorPager what="turns" pages={pages} next={turns.data?.next} />
    </Section>
  );
}
