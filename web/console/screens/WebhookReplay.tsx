import { useState, type FormEvent } from 'react';
import { paths, useSession } from '../api/session';
import { ActionResult, ErrorNote, useAction } from '../components/async';
import { Pager, usePaged } from '../components/paged';
import { when } from '../components/table';

interface FeedEvent {
  readonly position: string;
  readonly metadata: { event_id: string; event_type: string; created_at: string };
  readonly payload: Record<string, unknown>;
}

const FEED_PAGE = 25;

const hookPath = (instanceId: string, webhookId: string, path: string) => paths.webhooks(instanceId, `/webhooks/${encodeURIComponent(webhookId)}${path}`);

/**
 * Replaying a webhook's deliveries from a log position (exclusive; empty: the start of the log)
 * or from a time (ISO 8601: the first event recorded at or after it), with where it starts.
 */
export function WebhookReplay({ webhookId, onReplayed }: { webhookId: string; onReplayed?: () => void }) {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const action = useAction();
  const [from, setFrom] = useState<'position' | 'time'>('position');
  const [value, setValue] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const body = from === 'position' ? { from_position: value.trim() } : { from_time: value.trim() };
      const answer = await session.instanceCall<{ replay: number; from_position: string | null }>('POST', hookPath(instanceId, webhookId, '/replay'), { body });
      onReplayed?.();
      return `Replay ${answer.replay} delivers every event after ${answer.from_position === null ? 'the start of the log' : `position ${answer.from_position}`}, then goes on live`;
    });
  };
  return (
    <form className="inline" onSubmit={submit} aria-label="replay webhook">
      <h2>Replay</h2>
      <select
        value={from}
        onChange={(e) => {
          setFrom(e.target.value as 'position' | 'time');
          setValue('');
        }}
        aria-label="replay from"
      >
        <option value="position">from a log position</option>
        <option value="time">from a time</option>
      </select>
      <input
        value={value}
        onChange={(e) => setValue(e.target.value)}
        aria-label={from === 'position' ? 'replay position' : 'replay time'}
        placeholder={from === 'position' ? 'Position (empty: the start of the log)' : 'Time, ISO 8601 (2026-01-31T09:00:00Z)'}
        required={from === 'time'}
        className="wide"
      />
      <button type="submit" disabled={action.busy}>
        Replay
      </button>
      <ActionResult action={action} />
    </form>
  );
}

/** A payload's size: the console shows metadata, never message content, unless a read of it is recorded (the room screen's). */
const payloadBytes = (payload: unknown) => new TextEncoder().encode(JSON.stringify(payload)).length;

/** The events the webhook carries, pulled a page at a time from its feed (`…/events?after=`), oldest first, as metadata. */
export function WebhookFeed({ webhookId }: { webhookId: string }) {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const feed = usePaged(
    async (after) => {
      const page = await session.instanceCall<{ events: FeedEvent[]; next: string | null }>('GET', hookPath(instanceId, webhookId, '/events'), { query: { after, limit: FEED_PAGE } });
      // `next` moves past events the webhook does not carry; where it stays put, the feed ends here.
      return { items: page.events, next: page.next !== null && page.next !== (after ?? null) ? page.next : undefined };
    },
    [instanceId, webhookId],
  );
  return (
    <>
      <h2>Pull feed</h2>
      <ErrorNote error={feed.error} />
      <table aria-label="webhook feed">
        <thead>
          <tr>
            <th>Position</th>
            <th>Event</th>
            <th>Event id</th>
            <th>When</th>
            <th>Payload</th>
          </tr>
        </thead>
        <tbody>
          {feed.items.map((e) => (
            <tr key={e.metadata.event_id}>
              <td>{e.position}</td>
              <td>{e.metadata.event_type}</td>
              <td>
                <code>{e.metadata.event_id}</code>
              </td>
              <td>{when(e.metadata.created_at)}</td>
              <td>{payloadBytes(e.payload)} bytes</td>
            </tr>
          ))}
          {!feed.loading && feed.items.length === 0 && (
            <tr>
              <td colSpan={5} className="empty">
                No events on this page
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <Pager paged={feed} />
    </>
  );
}
