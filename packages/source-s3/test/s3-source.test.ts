import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { GenericContainer, Wait, getContainerRuntimeClient } from 'testcontainers';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import { describeS3SourceBehaviour, type S3Backend } from './s3-source-behaviour.js';

// Always: s3rver is an npm package the test starts itself (a child process).
describeS3SourceBehaviour('s3rver', () => startS3rver());

/*
 * The same source also against MinIO through testcontainers when a Docker
 * engine answers. This is the one conditional suite: where no engine answers it is
 * not registered, and the run says so out loud.
 */
const MINIO_IMAGE = 'minio/minio:RELEASE.2025-04-22T22-12-26Z';
const MINIO_CREDENTIALS = { accessKeyId: 'minio-test', secretAccessKey: 'minio-test-secret' };

async function dockerAnswers(): Promise<string | undefined> {
  try {
    await getContainerRuntimeClient();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function startMinio(): Promise<S3Backend> {
  const container = await new GenericContainer(MINIO_IMAGE)
    .withCommand(['server', '/data'])
    .withEnvironment({
      MINIO_ROOT_USER: MINIO_CREDENTIALS.accessKeyId,
      MINIO_ROOT_PASSWORD: MINIO_CREDENTIALS.secretAccessKey,
    })
    .withExposedPorts(9000)
    .withWaitStrategy(Wait.forHttp('/minio/health/live', 9000))
    .start();
  const endpoint = `http://${container.getHost()}:${container.getMappedPort(9000)}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: MINIO_CREDENTIALS });
  return {
    endpoint,
    credentials: MINIO_CREDENTIALS,
    client,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    async close() {
      client.destroy();
      await container.stop();
    },
  };
}

const noDocker = await dockerAnswers();
if (noDocker === undefined) {
  describeS3SourceBehaviour('MinIO (testcontainers)', startMinio);
} else {
  console.warn(`S3 source MinIO suite NOT RUN: no Docker engine answered (${noDocker}). The s3rver suite still ran.`);
}
