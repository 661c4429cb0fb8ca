import { useState, type FormEvent } from 'react';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction } from '../components/async';
import { NeedsCredential } from '../components/layout';
import { Pager, usePaged } from '../components/paged';

interface FeedItem {
  readonly id: string;
  readonly created: number;
  readonly data: unknown;
}

const FEEDS_PAGE = 25;
const ITEMS_PAGE = 20;

/** Feeds by prefix page by page (parley_admin), a feed's items page by page (newest first), and publishing an item. */
export function Feeds() {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const [prefix, setPrefix] = useState('');
  const [feedId, setFeedId] = useState('');
  const [item, setItem] = useState('{"text": "hello"}');
  const publish = useAction();
  const feeds = usePaged(
    async (after) => {
      const page = await session.instanceCall<{ feeds: { id: string; item_count: number }[]; next?: string }>('GET', paths.admin(instanceId, '/feeds'), {
        query: { prefix, after, limit: FEEDS_PAGE },
      });
      return { items: page.feeds, next: page.next };
    },
    [instanceId, prefix],
  );
  const items = usePaged(
    async (cursor) => {
      if (!feedId) return { items: [] as FeedItem[] };
      const page = await session.feedsCall<{ items: FeedItem[]; next_cursor: string | null }>('GET', paths.feeds(instanceId, `/feeds/${encodeURIComponent(feedId)}/items`), {
        query: { cursor, limit: ITEMS_PAGE },
      });
      return { items: page.items, next: page.next_cursor };
    },
    [instanceId, feedId],
  );
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void publish.run(async () => {
      const parsed: unknown = JSON.parse(item);
      await session.feedsCall('POST', paths.feeds(instanceId, `/feeds/${encodeURIComponent(feedId)}/items`), { body: { items: [parsed] } });
      items.reload();
      feeds.reload();
      return `Published to ${feedId}`;
    });
  };
  return (
    <section>
      <h1>Feeds</h1>
      <input type="search" placeholder="Feed id starts with…" value={prefix} onChange={(e) => setPrefix(e.target.value)} aria-label="search feeds" />
      <ErrorNote error={feeds.error} />
      <ul aria-label="feeds" className="chips">
        {feeds.items.map((feed) => (
          <li key={feed.id}>
            <button type="button" onClick={() => setFeedId(feed.id)} className={feed.id === feedId ? 'selected' : ''}>
              {feed.id} ({feed.item_count})
            </button>
          </li>
        ))}
        {!feeds.loading && feeds.items.length === 0 && <li className="hint">No feeds</li>}
      </ul>
      {(feeds.hasNext || feeds.hasPrevious) && <Pager paged={feeds} label="feed pages" />}
      <form className="inline" onSubmit={submit} aria-label="publish item">
        <h2>Publish</h2>
        <input placeholder="Feed id" value={feedId} onChange={(e) => setFeedId(e.target.value)} required aria-label="feed id" />
        <input placeholder="Item (JSON)" value={item} onChange={(e) => setItem(e.target.value)} required aria-label="item" className="wide" />
        <button type="submit" disabled={publish.busy}>
          Publish
        </button>
        <ActionResult action={publish} />
      </form>
      {feedId && (
        <>
          <h2>
            Items of <code>{feedId}</code>
          </h2>
          <ErrorNote error={items.error} />
          <ol aria-label="items" className="timeline">
            {items.items.map((i) => (
              <li key={i.id}>
                <span className="id">{i.id}</span> <time>{new Date(i.created * (i.created < 1e12 ? 1000 : 1)).toLocaleString()}</time> <code>{JSON.stringify(i.data)}</code>
              </li>
            ))}
          </ol>
          <Pager paged={items} />
        </>
      )}
    </section>
  );
}
