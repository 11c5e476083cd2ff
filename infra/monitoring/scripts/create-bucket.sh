#!/bin/sh
# Bucket Job of the log store (spec "Bucket job"): plain S3 calls, head-bucket and create-bucket when the head
# call fails, up to ATTEMPTS tries while the object store is not ready yet. Exit 0 when the bucket exists.
#
# Environment:
#   S3_ENDPOINT            object store URL, e.g. http://objectstore.app-shaide.svc.cluster.local:9000
#   S3_BUCKET              bucket to ensure
#   AWS_DEFAULT_REGION     region to sign the requests for, default us-east-1
#   S3_LOCATION_CONSTRAINT the bucket's LocationConstraint, sent only when set (AWS outside us-east-1)
#   AWS_ACCESS_KEY_ID      from the credentials Secret; absent with workload identity, where the CLI's default
#   AWS_SECRET_ACCESS_KEY  chain takes AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE (EKS IRSA) instead
#   ATTEMPTS               default 5 (spec limit "bucket job attempts")
#   RETRY_DELAY_SECONDS    pause between attempts, default 10
set -u

: "${S3_ENDPOINT:?S3_ENDPOINT is required}"
: "${S3_BUCKET:?S3_BUCKET is required}"
attempts="${ATTEMPTS:-5}"
delay="${RETRY_DELAY_SECONDS:-10}"

# S3-compatible stores (MinIO and the like) are addressed path-style; the CLI reads that only from a config file.
AWS_CONFIG_FILE="$(mktemp)"
export AWS_CONFIG_FILE
printf '[default]\ns3 =\n    addressing_style = path\n' > "$AWS_CONFIG_FILE"
# One HTTP try per attempt: this loop, not the CLI's own retries, is what the attempt limit counts.
export AWS_MAX_ATTEMPTS=1 AWS_RETRY_MODE=standard
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
location="${S3_LOCATION_CONSTRAINT:+LocationConstraint=$S3_LOCATION_CONSTRAINT}"
# The CLI pages its output through `less` when it finds one; a Job has no terminal.
export AWS_PAGER=""

s3api() {
  aws --endpoint-url "$S3_ENDPOINT" --cli-connect-timeout 5 --cli-read-timeout 10 s3api "$@"
}

i=1
while [ "$i" -le "$attempts" ]; do
  if s3api head-bucket --bucket "$S3_BUCKET"; then
    echo "bucket $S3_BUCKET exists (attempt $i/$attempts): nothing to do"
    exit 0
  fi
  if s3api create-bucket --bucket "$S3_BUCKET" ${location:+--create-bucket-configuration "$location"}; then
    echo "bucket $S3_BUCKET created (attempt $i/$attempts)"
    exit 0
  fi
  echo "attempt $i/$attempts failed: object store at $S3_ENDPOINT not ready, or credentials rejected (403/SignatureDoesNotMatch)" >&2
  i=$((i + 1))
  if [ "$i" -le "$attempts" ]; then sleep "$delay"; fi
done
echo "giving up on bucket $S3_BUCKET after $attempts attempts" >&2
exit 1
