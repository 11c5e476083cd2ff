import { Readable } from "node:stream";
import type { BodyLease } from "../../context/admitted-body";

/**
 * The bytes to send upstream, with the memory lease they hold. The bytes are let go, and the lease returned,
 * as soon as the upstream request has taken them (undici read the whole body and wrote it to the model
 * server's connection; for a LoRA adapter's request, up to 2 s later, in case the server answers 404 for the
 * adapter: upstream/send.ts), not when the model server answers: a non-streaming generation takes minutes, and
 * holding its prompt that long would let a few hundred long-context requests fill the gateway's body memory.
 *
 * Each attempt gets a one-shot stream rather than the buffer itself: undici keeps a request's body object
 * until the response ends, which would pin the bytes however early they were released.
 */
export class HeldBody {
  private bytes: Buffer | undefined;
  readonly length: number;

  constructor(
    bytes: Buffer,
    private readonly lease: BodyLease,
  ) {
    this.bytes = bytes;
    this.length = bytes.length;
    lease.resize(bytes.length);
  }

  /** False once the body has been sent (or the request is over): another attempt cannot send it again. */
  get held(): boolean {
    return this.bytes !== undefined;
  }

  /** Where `text` first occurs in the bytes (-1 if nowhere, or once let go). */
  find(text: string): number {
    return this.bytes ? this.bytes.indexOf(text, 0, "latin1") : -1;
  }

  /** Overwrites bytes in place at `offset` (the same length), before an attempt sends them; false once let go. */
  overwrite(offset: number, text: string): boolean {
    if (!this.bytes) return false;
    this.bytes.write(text, offset, "latin1");
    return true;
  }

  /**
   * One attempt's body. Once the upstream request has read it all, `sent` is called if given (the caller decides
   * when to let the bytes go), else the bytes are released.
   */
  stream(sent?: () => void): Readable {
    let bytes = this.bytes;
    const body = new Readable({
      read() {
        if (bytes) this.push(bytes);
        bytes = undefined;
        this.push(null);
      },
    });
    body.once("end", () => (sent ? sent() : this.release()));
    // The upstream request reports its own failures; an error this stream is destroyed with must not end the process.
    body.on("error", () => undefined);
    return body;
  }

  /** The request waits for a replica: its memory counts among waiting bodies (false: there is no room there). */
  park(): boolean {
    return this.bytes === undefined || this.lease.park();
  }

  /** The request waits no more: its memory counts among the others again, if they have room. */
  unpark(): void {
    if (this.bytes !== undefined) this.lease.unpark();
  }

  /** The model server has the body, or the request is over: free the bytes. Idempotent. */
  release(): void {
    this.bytes = undefined;
    this.lease.release();
  }
}
