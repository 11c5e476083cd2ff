// Images the platform's own Jobs run, pinned (a moving `latest` would change a Job under a stack that did not
// change), shared where two parts need the same tool so there is one image to mirror.

/** The AWS CLI, 2.x: the log store's bucket Job on an S3 API, and the s3:// weights download. */
export const AWS_CLI_IMAGE = "amazon/aws-cli:2.37.5";
