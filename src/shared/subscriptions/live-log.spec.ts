import { openSqliteStores, SqliteStores } from '../../../test/support/sqlite-stores';
import { RecordedEvent } from '../domain/event';
import { LiveLog } from './live-log';
import { eventually } from '../../../test/support/waiting';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const sent = (text: string) => ({ type: 'MessageSent', data: { text }, metadata: meta });

describe('LiveLog', () => {
  let stores: SqliteStores;
  let liveLog: LiveLog;
  afterEach(async () => {
    await liveLog?.stop();
    await stores.close();
  });

  it('opens only the events a listener takes, routed by what the log holds, and hands listeners the opened event in log order', async () => {
    stores = openSqliteStores('parley-live-log-');
    const opened: string[] = [];
    liveLog = new LiveLog(stores.events, {
      // An open that waits, as one whose key the cache does not know.
      open: async (event) => {
        opened.push(event.streamName);
        await new Promise((resolve) => setImmediate(resolve));
        return { ...event, data: { ...(event.data as object), opened: true } };
      },
    });
    liveLog.addRouter((event) => (event.streamName === 'messages-acme.routed' ? ['routed-key'] : []));
    await liveLog.start();
    const heard: RecordedEvent[] = [];
    liveLog.on('messages-acme.watched', (event) => heard.push(event));
    liveLog.on('routed-key', (event) => heard.push(event));

    await stores.events.append('messages-acme.unwatched', [sent('a')], 'any');
    await stores.events.append('messages-acme.watched', [sent('b')], 'any');
    await stores.events.append('messages-acme.unwatched', [sent('c')], 'any');
    const last = await stores.events.append('messages-acme.routed', [sent('d')], 'any');

    await eventually(() => liveLog.position === last.position || undefined);
    expect(opened).toEqual(['messages-acme.watched', 'messages-acme.routed']);
    expect(heard.map((event) => event.data)).toEqual([
      { text: 'b', opened: true },
      { text: 'd', opened: true },
    ]);
  });
});
