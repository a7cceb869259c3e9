// Compose only: forwards 127.0.0.1:8081 inside a gateway container to Keycloak.
//
// The gateway accepts plain-http issuers and JWKS URLs only on loopback addresses (anything
// else must be https: RFC 9700 §2.1 / RFC 8414 §2). The browser reaches Keycloak at
// http://localhost:8081, which is therefore the `iss` of its tokens; this forwarder makes the
// same URL work inside each gateway container. A real deployment uses an https issuer instead.
import { connect, createServer } from 'node:net';

// node loopback-forward.mjs <listen port> <target host>:<target port>
const listenPort = Number(process.argv[2]);
const [targetHost, targetPort] = (process.argv[3] ?? '').split(':');
if (!Number.isInteger(listenPort) || !targetHost || !targetPort) {
  process.stderr.write('usage: node loopback-forward.mjs <listen port> <target host>:<target port>\n');
  process.exit(2);
}

createServer((client) => {
  const upstream = connect(Number(targetPort), targetHost);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.pipe(upstream).pipe(client);
}).listen(listenPort, '127.0.0.1', function () {
  const { port } = this.address();
  process.stdout.write(
    `${JSON.stringify({ msg: 'loopback forwarder listening', port, target: `${targetHost}:${targetPort}` })}\n`,
  );
});
