import { WireEvent } from '../../shared/subscriptions/event-channel';
import { closeFrame, endOfStreamFrame, eventFrame, openFrame, parseClientMessage, pongFrame } from './multiplex-frames';
import { payloadOf } from './ws-frames';

/** The message a frame carries, as the client parses it. */
const messageOf = (frame: Buffer): unknown => JSON.parse(payloadOf(frame).toString('utf8'));

describe('the multiplex protocol’s messages', () => {
  it('reads a client message that is a JSON array starting with its type, and nothing else', () => {
    expect(parseClientMessage(Buffer.from('[100,1,"/path",{"authorization":"Bearer t"}]'))).toEqual([100, 1, '/path', { authorization: 'Bearer t' }]);
    expect(parseClientMessage('[16,"ping id"]')).toEqual([16, 'ping id']);
    for (const bad of ['not json', '{"0":100}', '"100"', '[]', '["100",1]', 'null']) expect(parseClientMessage(bad)).toBeNull();
  });

  it('writes the server’s control messages with the exact arities the client checks', () => {
    expect(messageOf(openFrame(5))).toEqual([101, 5, 200, {}]);
    expect(messageOf(endOfStreamFrame(5, 404, { error: 'not_found/room' }))).toEqual([199, 5, 404, {}, { error: 'not_found/room' }]);
    expect(messageOf(endOfStreamFrame(5, 204, null))).toEqual([199, 5, 204, {}, null]);
    expect(messageOf(pongFrame('ping id'))).toEqual([17, 'ping id']);
    expect(messageOf(closeFrame(400, { error: 'bad_request/invalid_frame' }))).toEqual([99, 400, {}, { error: 'bad_request/invalid_frame' }]);
  });

  it('writes an event as [102, subID, eventID, headers, body], headers {} when it has none', () => {
    expect(messageOf(eventFrame({ id: '42', body: { text: 'héllo 🎉' } }, 3))).toEqual([102, 3, '42', {}, { text: 'héllo 🎉' }]);
    expect(messageOf(eventFrame({ id: '43', body: null, headers: { 'x-a': 'b' } }, 123456))).toEqual([102, 123456, '43', { 'x-a': 'b' }, null]);
  });

  it('frames a shared event once per subscription id, and an unshared one each time it is sent', () => {
    const shared: WireEvent = { id: '1', body: { text: 'to all' }, shared: true };
    expect(eventFrame(shared, 7)).toBe(eventFrame(shared, 7));
    expect(messageOf(eventFrame(shared, 8))).toEqual([102, 8, '1', {}, { text: 'to all' }]);
    const own: { id: string; body: { text: string } } = { id: '2', body: { text: 'first' } };
    const first = eventFrame(own, 7);
    own.body.text = 'changed';
    expect(messageOf(first)).toEqual([102, 7, '2', {}, { text: 'first' }]);
    expect(messageOf(eventFrame(own, 7))).toEqual([102, 7, '2', {}, { text: 'changed' }]);
  });
});
