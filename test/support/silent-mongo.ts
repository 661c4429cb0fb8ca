import { BSON } from 'mongodb';
import { createServer, Server, Socket } from 'node:net';

/**
 * A MongoDB that stops answering: a local endpoint speaking the wire protocol (OP_MSG, and the
 * legacy OP_QUERY handshake) that completes the driver's handshake and monitoring (`hello`,
 * `ping`, `endSessions`) as a writable primary, then never answers any other command, as a
 * primary does when it hangs or a network path drops replies. `commands` lists the commands it
 * left unanswered.
 */
export interface SilentMongo {
  readonly uri: string;
  readonly commands: string[];
  close(): Promise<void>;
}

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

export async function startSilentMongo(): Promise<SilentMongo> {
  const commands: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    const connectionId = ++connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    socket.on('data', (data) => {
      buffered = Buffer.concat([buffered, data]);
      while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
        const message = buffered.subarray(0, buffered.readInt32LE(0));
        buffered = buffered.subarray(message.length);
        const reply = answer(message, connectionId, commands);
        if (reply) socket.write(reply);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    uri: `mongodb://127.0.0.1:${port}/?directConnection=true`,
    commands,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The reply to one request, or null to stay silent. */
function answer(message: Buffer, connectionId: number, unanswered: string[]): Buffer | null {
  const requestId = message.readInt32LE(4);
  const opCode = message.readInt32LE(12);
  let at: number;
  if (opCode === OP_MSG) {
    at = 21; // header, flag bits, section kind 0
  } else if (opCode === OP_QUERY) {
    at = message.indexOf(0, 20) + 9; // full collection name, skip, return
  } else {
    return null;
  }
  const command = BSON.deserialize(message.subarray(at, at + message.readInt32LE(at)));
  const name = Object.keys(command)[0];
  let body: Record<string, unknown>;
  if (/^(hello|ismaster)$/i.test(name)) {
    body = {
      helloOk: true,
      isWritablePrimary: true,
      ismaster: true,
      maxBsonObjectSize: 16 * 1024 * 1024,
      maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000,
      localTime: new Date(),
      logicalSessionTimeoutMinutes: 30,
      connectionId,
      minWireVersion: 0,
      maxWireVersion: 21,
      readOnly: false,
      ok: 1,
    };
  } else if (/^(ping|endSessions)$/i.test(name)) {
    body = { ok: 1 };
  } else {
    unanswered.push(name);
    return null;
  }
  const document = BSON.serialize(body);
  const header = Buffer.alloc(opCode === OP_MSG ? 21 : 36);
  header.writeInt32LE(header.length + document.length, 0);
  header.writeInt32LE(0, 4);
  header.writeInt32LE(requestId, 8);
  if (opCode === OP_MSG) {
    header.writeInt32LE(OP_MSG, 12);
    header.writeUInt32LE(0, 16); // flag bits
    header.writeUInt8(0, 20); // section kind 0: the body
  } else {
    header.writeInt32LE(OP_REPLY, 12);
    header.writeInt32LE(0, 16); // response flags
    header.writeBigInt64LE(0n, 20); // cursor id
    header.writeInt32LE(0, 28); // starting from
    header.writeInt32LE(1, 32); // documents returned
  }
  return Buffer.concat([header, document]);
}
