import { useState } from 'react';
import { useLoad } from './async';

/**
 * Pages of a collection, by the cursor each answer names (`next`): the stack of cursors seen
 * allows going back. Only one page is ever held.
 */
export function usePaged<T>(loadPage: (cursor: string | undefined) => Promise<{ items: T[]; next?: string | null }>, deps: readonly unknown[]) {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [depsKey, setDepsKey] = useState(JSON.stringify(deps));
  const key = JSON.stringify(deps);
  if (key !== depsKey) {
    setDepsKey(key);
    setCursors([undefined]);
  }
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => loadPage(cursor), [...deps, cursor]);
  return {
    ...page,
    items: page.data?.items ?? [],
    pageNumber: cursors.length,
    hasNext: Boolean(page.data?.next),
    hasPrevious: cursors.length > 1,
    next: () => page.data?.next && setCursors([...cursors, page.data.next]),
    previous: () => setCursors(cursors.slice(0, -1)),
  };
}

export function Pager({
  paged,
  label = 'pages',
}: {
  paged: { pageNumber: number; hasNext: boolean; hasPrevious: boolean; next(): void; previous(): void; loading: boolean };
  /** Names the pager where a screen has more than one. */
  label?: string;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" onClick={paged.previous} disabled={!paged.hasPrevious || paged.loading}>
        ← Previous
      </button>
      <span>Page {paged.pageNumber}</span>
      <button type="button" onClick={paged.next} disabled={!paged.hasNext || paged.loading}>
        Next →
      </button>
    </nav>
  );
}
