import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/http';

export const messageOf = (error: unknown): string =>
  error instanceof ApiError ? `${error.message} (${error.status} ${error.code})` : error instanceof Error ? error.message : String(error);

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {messageOf(error)}
    </p>
  );
}

/** Loads `load()` now and whenever `deps` change; `reload()` loads again (resolved once shown). */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const reload = useCallback(async (): Promise<void> => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    await load().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: unknown) => mine === generation.current && setState({ error, loading: false }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => void reload(), [reload]);
  return { ...state, reload };
}

/** Runs an action from a button or a form, keeping its error and whether it runs. */
export function useAction() {
  const [state, setState] = useState<{ error?: unknown; busy: boolean; done?: string }>({ busy: false });
  const run = useCallback(async (action: () => Promise<string | void>) => {
    setState({ busy: true });
    try {
      const done = await action();
      setState({ busy: false, done: done ?? undefined });
      return true;
    } catch (error) {
      setState({ busy: false, error });
      return false;
    }
  }, []);
  return { ...state, run };
}

export function ActionResult({ action }: { action: { error?: unknown; done?: string } }) {
  if (action.error) return <ErrorNote error={action.error} />;
  if (action.done) return <p className="done" role="status">{action.done}</p>;
  return null;
}
