import type * as S3Module from '@aws-sdk/client-s3';
import { loadOnFirstUse } from '@mcpgw/core';

/** The AWS SDK's S3 client, loaded with the first S3 source: a gateway without one never loads it. */
export const awsS3 = loadOnFirstUse<typeof S3Module>('@aws-sdk/client-s3', import.meta.url);
