import type { ColumnDef } from '@tanstack/react-table';
import { useState, type ReactNode } from 'react';
import { paths, useSession } from '../api/session';
import { ErrorNote } from './async';
import { NeedsCredential } from './layout';
import { Pager, usePaged } from './paged';
import { DataTable } from './table';

const PAGE_SIZE = 25;

/**
 * A collection of the instance searched by id or name prefix, a page at a time (the parley_admin
 * `users` and `rooms` routes answer `{<collection>: [...], next?}`), with what the screen adds
 * below it (a create form, given a way to reload the list).
 */
export function PrefixSearchList<T>({
  title,
  collection,
  noun,
  columns,
  children,
}: {
  title: string;
  collection: 'users' | 'rooms';
  noun: string;
  columns: ColumnDef<T, any>[];
  children?: (reload: () => void) => ReactNode;
}) {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const [prefix, setPrefix] = useState('');
  const paged = usePaged(
    async (after) => {
      const page = await session.instanceCall<Record<string, T[]> & { next?: string }>('GET', paths.admin(instanceId, `/${collection}`), { query: { prefix, after, limit: PAGE_SIZE } });
      return { items: page[collection] as T[], next: page.next };
    },
    [instanceId, prefix],
  );
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  return (
    <section>
      <h1>{title}</h1>
      <input type="search" aria-label={`search ${collection}`} placeholder="Id or name starts with…" value={prefix} onChange={(e) => setPrefix(e.target.value)} />
      <ErrorNote error={paged.error} />
      <DataTable label={collection} columns={columns} rows={paged.items} empty={prefix ? `No ${noun} starts with that` : `No ${collection} yet`} />
      <Pager paged={paged} />
      {children?.(paged.reload)}
    </section>
  );
}
