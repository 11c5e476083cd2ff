#!/bin/sh
# The usage ledger's bucket Job: makes the bucket if it is missing, then sets the lifecycle rule that expires the
# ledger's objects after the retention, keeping every other rule of the bucket. Up to ATTEMPTS tries while the object
# store is not ready yet. Exit 0 when the bucket exists with the rule.
#
# Environment:
#   S3_ENDPOINT            object store URL (AWS: https://s3.<region>.amazonaws.com)
#   S3_BUCKET              bucket to ensure
#   LEDGER_PREFIX          the ledger's prefix (e.g. ledger/); empty: the whole bucket
#   RETENTION_DAYS         days after which the ledger's objects expire
#   RULE_ID                ID of the platform's rule, the only rule this script replaces
#   AWS_DEFAULT_REGION     region to sign the requests for, default us-east-1
#   S3_LOCATION_CONSTRAINT the bucket's LocationConstraint, sent only when set (AWS outside us-east-1)
#   AWS_ACCESS_KEY_ID      the admin keys from their Secret; absent with workload identity (EKS IRSA), where the CLI's
#   AWS_SECRET_ACCESS_KEY  default chain takes AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE instead
#   ATTEMPTS               default 5
#   RETRY_DELAY_SECONDS    pause between attempts, default 10
set -u

: "${S3_ENDPOINT:?S3_ENDPOINT is required}"
: "${S3_BUCKET:?S3_BUCKET is required}"
: "${RETENTION_DAYS:?RETENTION_DAYS is required}"
: "${RULE_ID:?RULE_ID is required}"
prefix="${LEDGER_PREFIX-}"
attempts="${ATTEMPTS:-5}"
delay="${RETRY_DELAY_SECONDS:-10}"

# S3-compatible stores (MinIO and the like) are addressed path-style; the CLI reads that only from a config file.
AWS_CONFIG_FILE="$(mktemp)"
export AWS_CONFIG_FILE
printf '[default]\ns3 =\n    addressing_style = path\n' > "$AWS_CONFIG_FILE"
# One HTTP try per call: this loop, not the CLI's own retries, is what the attempt limit counts.
export AWS_MAX_ATTEMPTS=1 AWS_RETRY_MODE=standard
export AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-us-east-1}"
export AWS_PAGER=""
location="${S3_LOCATION_CONSTRAINT:+LocationConstraint=$S3_LOCATION_CONSTRAINT}"
errors="$(mktemp)"

s3api() {
  aws --endpoint-url "$S3_ENDPOINT" --cli-connect-timeout 5 --cli-read-timeout 10 s3api "$@"
}

# Bucket names and prefixes are checked by the stack (letters, digits, . _ - /): safe inside JSON and a JMESPath literal.
rule="{\"ID\":\"$RULE_ID\",\"Status\":\"Enabled\",\"Filter\":{\"Prefix\":\"$prefix\"},\"Expiration\":{\"Days\":$RETENTION_DAYS}}"

ensure_bucket() {
  if s3api head-bucket --bucket "$S3_BUCKET"; then
    echo "bucket $S3_BUCKET exists"
    return 0
  fi
  s3api create-bucket --bucket "$S3_BUCKET" ${location:+--create-bucket-configuration "$location"} > /dev/null && echo "bucket $S3_BUCKET created"
}

# The bucket's rules with ours in place of any earlier one of the same ID. Another error than "no configuration yet"
# (a refusal, a timeout) stops here: writing only our rule then would delete rules the script could not read.
merged_lifecycle() {
  if s3api get-bucket-lifecycle-configuration --bucket "$S3_BUCKET" \
    --query "{Rules: [Rules[?ID!='$RULE_ID'], \`[$rule]\`][]}" --output json 2> "$errors"; then
    return 0
  fi
  if grep -q NoSuchLifecycleConfiguration "$errors"; then
    echo "{\"Rules\":[$rule]}"
    return 0
  fi
  cat "$errors" >&2
  return 1
}

apply_lifecycle() {
  config="$(merged_lifecycle)" || return 1
  s3api put-bucket-lifecycle-configuration --bucket "$S3_BUCKET" --lifecycle-configuration "$config" || return 1
  echo "lifecycle rule $RULE_ID: objects under '$prefix' expire after $RETENTION_DAYS days"
}

i=1
while [ "$i" -le "$attempts" ]; do
  if ensure_bucket && apply_lifecycle; then
    echo "done (attempt $i/$attempts)"
    exit 0
  fi
  echo "attempt $i/$attempts failed: object store at $S3_ENDPOINT not ready, credentials rejected, or lifecycle rules not supported (NotImplemented)" >&2
  i=$((i + 1))
  if [ "$i" -le "$attempts" ]; then sleep "$delay"; fi
done
echo "giving up on bucket $S3_BUCKET after $attempts attempts" >&2
exit 1
