import type { BodyLease } from "../../limits/body-budget";

/**
 * The bytes to send upstream, with the memory lease they hold. Each upstream attempt gets a one-shot stream
 * rather than the buffer itself: undici keeps a request's body object until the response ends, and a stream
 * may last minutes, so handing it the buffer would pin the bytes long after `release()` returned them.
 */
export class HeldBody {
  private bytes: Buffer | undefined;
  readonly length: number;

  constructor(bytes: Buffer, private readonly lease: BodyLease) {
    this.bytes = bytes;
    this.length = bytes.length;
    lease.resize(bytes.length);
  }

  /** One attempt's body; yields nothing once released (an attempt after release is a bug, not a resend). */
  *chunks(): Generator<Buffer> {
    const bytes = this.bytes;
    if (bytes) yield bytes;
  }

  /** The model server has the body (its answer started) or the request is over: free the bytes. */
  release(): void {
    this.bytes = undefined;
    this.lease.release();
  }
}
