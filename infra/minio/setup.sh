#!/bin/sh
# One-shot (compose service minio-setup): the demo bucket with a sample object, and a gateway
# user that may only list and read that bucket. Idempotent, so `docker compose up` can rerun it.
set -eu
mc alias set local http://minio:9000 minioadmin "$MINIO_ROOT_PASSWORD"
mc mb --ignore-existing local/demo-reports
printf '# Q3 report\n\nServed from MinIO by the s3 source.\n' | mc pipe local/demo-reports/published/q3.md
cat > /tmp/gateway-read.json <<'JSON'
{
  "Version": "2012-10-17",
  "Statement": [
    { "Effect": "Allow", "Action": ["s3:ListBucket", "s3:GetBucketLocation"], "Resource": ["arn:aws:s3:::demo-reports"] },
    { "Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::demo-reports/*"] }
  ]
}
JSON
mc admin policy create local gateway-read /tmp/gateway-read.json
mc admin user add local gateway "$MINIO_GATEWAY_SECRET"
# attach refuses a policy that is already attached: attach only when missing.
mc admin user info local gateway | grep -q gateway-read || mc admin policy attach local gateway-read --user gateway
