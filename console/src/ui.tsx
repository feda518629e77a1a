import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api';

/** Loads with `load` whenever `deps` change; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: unknown) =>
        mine === generation.current && setState({ error: errorText(error), loading: false }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

/** Runs an action; its failure is shown in words beside the control that started it. */
export function useAction() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(errorText(failure));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run, clear: () => setError(null) };
}

export function ErrorNote({ error }: { error?: string | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function Section(props: {
  title: string;
  id: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section aria-labelledby={`${props.id}-title`} class="card">
      <div class="card-head">
        <h2 id={`${props.id}-title`}>{props.title}</h2>
        {props.actions}
      </div>
      {props.children}
    </section>
  );
}

/** A modal confirmation (the native dialog element: focus stays in it, Escape cancels). */
export function Confirm(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onCancel={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div class="row">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime())
    ? value
    : date.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

/** A stored JSON value as people read it: strings without quotes. */
export function showValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function go(hash: string): void {
  window.location.hash = hash;
}

/** Pages of a list the service pages by cursor: the cursors of the pages behind the current one. */
export function useCursorPages() {
  const [cursors, setCursors] = useState<string[]>([]);
  return {
    cursor: cursors[cursors.length - 1] as string | undefined,
    atFirst: cursors.length === 0,
    newer: () => setCursors(cursors.slice(0, -1)),
    older: (next: string) => setCursors([...cursors, next]),
    reset: () => setCursors([]),
  };
}

export function CursorPager(props: {
  what: string;
  pages: ReturnType<typeof useCursorPages>;
  next: string | null | undefined;
}) {
  const { pages, next, what } = props;
  return (
    <nav class="row" aria-label={`${what} pages`}>
      <button type="button" disabled={pages.atFirst} onClick={pages.newer}>
        Newer {what}
      </button>
      <button type="button" disabled={!next} onClick={() => next && pages.older(next)}>
        Older {what}
      </button>
    </nav>
  );
}
