// What an S3 endpoint URL says about the store behind it, shared by every key that names one (`monitoring:s3Endpoint`,
// `serving:weightsS3.endpoint`): whether it is AWS's own S3, and which region an AWS endpoint serves. AWS refuses a
// request signed (SigV4) for another region than the endpoint's; other stores mostly accept any region name.

/** True for AWS's own S3 endpoints (regional, dual-stack, FIPS, VPC endpoints, China). */
export function isAwsS3Endpoint(url: string): boolean {
  return URL.canParse(url) && /(^|\.)amazonaws\.com(\.cn)?$/.test(new URL(url).hostname);
}

/** The region an AWS S3 endpoint belongs to (`s3.eu-west-1.amazonaws.com` → eu-west-1; the global `s3.amazonaws.com` → us-east-1). */
export function awsEndpointRegion(url: string): string | undefined {
  if (!isAwsS3Endpoint(url)) return undefined;
  const host = new URL(url).hostname;
  const regional = /(?:^|[.-])([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/.exec(host);
  if (regional) return regional[1];
  return /^s3(-external-1)?\.amazonaws\.com$/.test(host) ? "us-east-1" : undefined;
}

/**
 * The message for a region key that an AWS endpoint contradicts, or undefined when they agree (or the endpoint is
 * another store's, or either value is not a string yet: the schema reports those).
 */
export function endpointRegionIssue(endpoint: unknown, region: unknown, endpointKey: string): string | undefined {
  if (typeof endpoint !== "string" || typeof region !== "string") return undefined;
  const expected = awsEndpointRegion(endpoint);
  if (expected === undefined || expected === region) return undefined;
  return `must be ${expected}, the region of ${endpointKey}: AWS refuses requests signed for another region`;
}
