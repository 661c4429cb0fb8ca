import { DomainError } from '../../shared/domain/errors';
import { EndOfStream, EventChannel } from '../../shared/subscriptions/event-channel';
import { OpenStreamSet } from './open-streams';

const DRAINING = new DomainError('unavailable', 'shutting_down', 'The server is restarting');

/** A channel attached to a transport that records how it ended. */
function openChannel(): { channel: EventChannel; ended: EndOfStream[] } {
  const channel = new EventChannel();
  const ended: EndOfStream[] = [];
  channel.drainTo(() => undefined, (eos) => ended.push(eos));
  return { channel, ended };
}

describe('OpenStreamSet', () => {
  it('counts a stream from when it is added until it closes', () => {
    const streams = new OpenStreamSet();
    const [a, b] = [openChannel(), openChannel()];
    streams.add(a.channel, '/services/chatkit/v6/i/rooms/1');
    streams.add(b.channel, '/services/chatkit/v6/i/users');
    expect(streams.size).toBe(2);
    a.channel.close();
    expect(streams.size).toBe(1);
    expect(streams.ending).toBeNull();
  });

  it('ends every open stream with the reason, named under the service of its own URL', () => {
    const streams = new OpenStreamSet();
    const [chat, feeds, closed] = [openChannel(), openChannel(), openChannel()];
    streams.add(chat.channel, '/services/chatkit/v6/i/rooms/1');
    streams.add(feeds.channel, '/services/feeds/v1/i/feeds/f/items');
    streams.add(closed.channel, '/services/chatkit/v6/i/users');
    closed.channel.close();
    streams.endAll(DRAINING);
    expect(streams.ending).toBe(DRAINING);
    expect(chat.ended).toEqual([{ status: 503, body: { error: 'services/chatkit/unavailable/shutting_down', error_description: 'The server is restarting' } }]);
    expect(feeds.ended).toEqual([{ status: 503, body: { error: 'services/feeds/unavailable/shutting_down', error_description: 'The server is restarting' } }]);
    expect(closed.ended).toEqual([]);
  });

  it('ends a stream at once that opens after the server began to drain', () => {
    const streams = new OpenStreamSet();
    streams.endAll(DRAINING);
    const late = openChannel();
    streams.add(late.channel, '/services/chatkit/v6/i/rooms/1');
    expect(late.ended).toEqual([{ status: 503, body: { error: 'services/chatkit/unavailable/shutting_down', error_description: 'The server is restarting' } }]);
  });
});
