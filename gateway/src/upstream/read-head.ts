import type { Dispatcher } from "undici";

/**
 * At most the first `limit` bytes of a model server's answer body: an error body, whose head is all that matters
 * (proxies answer with whole HTML pages). The rest is not read: leaving the loop destroys the body, and its
 * connection is closed. A read failure is thrown as it came.
 */
export async function readHead(upstream: Dispatcher.ResponseData, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of upstream.body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    received += chunk.length;
    if (received >= limit) break;
  }
  return Buffer.concat(chunks, received).subarray(0, limit);
}
