/**
 * WebSocket frames as a server writes them (RFC 6455 §5.2: FIN set, unmasked, no extension
 * bits), built here rather than by ws so that one event's frame is built once and written to
 * every socket that gets it.
 */

/** A whole text frame: `head` (ASCII), then `tail`, as its payload. */
export function textFrame(head: string, tail: Buffer): Buffer {
  const length = head.length + tail.length;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81;
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.write(head, headerLength, 'latin1');
  tail.copy(frame, headerLength + head.length);
  return frame;
}

/** The payload of a frame built by `textFrame`. */
export const payloadOf = (frame: Buffer): Buffer => frame.subarray(frame[1] === 126 ? 4 : frame[1] === 127 ? 10 : 2);

/** A control message of the multiplex protocol (open, end of stream, pong…) as a whole text frame of its JSON. */
export const controlFrame = (message: unknown[]): Buffer => textFrame('', Buffer.from(JSON.stringify(message)));
