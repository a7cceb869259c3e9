import { connect } from 'node:net';
import type { StartedTestContainer } from 'testcontainers';
import { GenericContainer, Wait, getContainerRuntimeClient } from 'testcontainers';

/**
 * Finds the services the tests need, in this order: a URL in
 * the environment (DATABASE_URL, REDIS_URL), else the service on its loopback
 * port, else a container through testcontainers when a Docker engine answers.
 * When none of these is there nothing is started here, and the tests that
 * need the service fail with a message saying how to start it (they never
 * skip). Runs once, before the test workers, which inherit what it sets.
 */
export default async function setup(): Promise<() => Promise<void>> {
  const containers: StartedTestContainer[] = [];
  const services = [
    {
      env: 'DATABASE_URL',
      port: 5432,
      start: async () => {
        const container = await new GenericContainer('postgres:17')
          .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
          .withExposedPorts(5432)
          .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
          .start();
        containers.push(container);
        return `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
      },
    },
    {
      env: 'REDIS_URL',
      port: 6379,
      start: async () => {
        const container = await new GenericContainer('redis:7').withExposedPorts(6379).start();
        containers.push(container);
        return `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
      },
    },
  ];
  for (const service of services) {
    if (process.env[service.env] || (await answers(service.port))) continue;
    if (!(await dockerAnswers())) continue;
    process.env[service.env] = await service.start();
    console.info(`test setup: ${service.env} from a testcontainers container`);
  }
  return async () => {
    await Promise.all(containers.map((container) => container.stop()));
  };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: 1_000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

async function dockerAnswers(): Promise<boolean> {
  try {
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}
