import { type AddressInfo, type Socket, createServer } from 'node:net';

// A server an admin could point a postgres source at: it speaks just enough
// of the Postgres wire protocol (protocol 3.0, "Message Flow: Start-up") to
// ask for the password in clear (AuthenticationCleartextPassword) and
// records every byte a client sends it, so that a test can show which
// password reached it. The local Postgres trusts 127.0.0.1 and would never
// ask for one.

/** AuthenticationCleartextPassword: `R`, length 8, code 3. */
const ASK_FOR_PASSWORD = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]);

export interface RecordingPostgresServer {
  readonly port: number;
  /** Everything every client sent, as text (the startup and password messages are text plus lengths). */
  received(): string;
  /** How many connections arrived. */
  connections(): number;
  close(): Promise<void>;
}

export async function startRecordingPostgresServer(): Promise<RecordingPostgresServer> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    let asked = false;
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      // The first message is the startup message: answer it by asking for the password.
      if (!asked) {
        asked = true;
        socket.write(ASK_FOR_PASSWORD);
      } else if (chunk[0] === 0x70) {
        // The password message ('p'): recorded; end the conversation.
        socket.end();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received: () => Buffer.concat(chunks).toString('latin1'),
    connections: () => connections,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
