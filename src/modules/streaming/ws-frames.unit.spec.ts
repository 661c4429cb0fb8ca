import * as ws from 'ws';
import { controlFrame, payloadOf, textFrame } from './ws-frames';

/** ws's own framing and parsing, which it exports untyped: what a ws server would send, and what every ws client reads. */
const { Sender, Receiver } = ws as unknown as {
  Sender: { frame(data: Buffer, options: { fin: boolean; opcode: number; mask: boolean; readOnly: boolean; rsv1: boolean }): Buffer[] };
  Receiver: new (options: { isServer: boolean }) => NodeJS.WritableStream & {
    on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): void;
    on(event: 'error', listener: (error: Error) => void): void;
  };
};

/** The text frame ws.send builds for `payload` on a server socket without compression. */
const framedByWs = (payload: Buffer): Buffer =>
  Buffer.concat(Sender.frame(payload, { fin: true, opcode: 0x01, mask: false, readOnly: false, rsv1: false }));

/** Every message ws's parser reads from `bytes`, as text, or the error it refuses them with. */
function readByWs(bytes: Buffer): { text: string; isBinary: boolean }[] {
  const receiver = new Receiver({ isServer: false });
  const messages: { text: string; isBinary: boolean }[] = [];
  receiver.on('message', (data, isBinary) => messages.push({ text: data.toString('utf8'), isBinary }));
  receiver.on('error', (error) => {
    throw error;
  });
  receiver.write(bytes);
  return messages;
}

describe('WebSocket text frames', () => {
  // Payload lengths at every boundary of RFC 6455's three length encodings (7 bits, 16 bits, 64 bits).
  const lengths = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000];

  it.each(lengths)('frames a %i-byte payload byte for byte as ws does', (length) => {
    const payload = Buffer.alloc(length, 'x');
    const headLength = Math.min(length, 6);
    const frame = textFrame(payload.toString('latin1', 0, headLength), payload.subarray(headLength));
    // As hex: jest compares a string at once, a Buffer byte by byte.
    expect(frame.toString('hex')).toBe(framedByWs(payload).toString('hex'));
    expect(payloadOf(frame).toString('hex')).toBe(payload.toString('hex'));
  });

  it('frames UTF-8 text after an ASCII head, and ws reads back frames written one after another', () => {
    const texts = ['héllo wörld — 你好 🎉', 'y'.repeat(300), 'z'.repeat(70_000)];
    const frames = texts.map((text) => textFrame('[1,', Buffer.from(`${JSON.stringify(text)}]`)));
    expect(readByWs(Buffer.concat(frames))).toEqual(texts.map((text) => ({ text: `[1,${JSON.stringify(text)}]`, isBinary: false })));
  });

  it('frames a control message as its JSON', () => {
    const frame = controlFrame([199, 3, 503, {}, { error: 'unavailable/draining' }]);
    expect(readByWs(frame)).toEqual([{ text: '[199,3,503,{},{"error":"unavailable/draining"}]', isBinary: false }]);
  });
});
