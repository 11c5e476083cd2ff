import { request, type Dispatcher } from "undici";
import { z } from "zod";

/** What the gateway reads of a vLLM `/v1/models` answer: each card's id and, for a LoRA adapter, its base model. */
export const ServedModelsSchema = z.looseObject({
  data: z.array(z.looseObject({ id: z.string(), parent: z.string().nullish() })),
});

export interface AdapterClientOptions {
  dispatcher: Dispatcher;
  /** The model servers' `Authorization` (their API key): their `/v1` routes need it. */
  authorization?: string;
  /** How long a load may take, ms (reading the adapter from storage). */
  timeoutMs: number;
}

/** vLLM refuses a second load of a name with this (another gateway pod loaded it first): it is there. */
const ALREADY_LOADED = /has already been loaded/;

/** What the gateway asks of a replica about its adapters (AdapterClient; the simulation's model servers). */
export interface AdapterServer {
  /** Loads `name` from `path`; resolves once the replica serves it, throws saying what it answered otherwise. */
  load(url: string, name: string, path: string): Promise<void>;
  /** Unloads `name` (one the replica no longer has counts as unloaded). */
  unload(url: string, name: string): Promise<void>;
  /** The adapters the replica lists, or undefined when it did not answer a listing. */
  listed(url: string, timeoutMs: number): Promise<string[] | undefined>;
}

/**
 * vLLM's runtime LoRA routes on one replica (`VLLM_ALLOW_RUNTIME_LORA_UPDATING`): load, unload, and the listing of
 * what it holds. Failures throw an Error whose message says what the server answered.
 */
export class AdapterClient implements AdapterServer {
  constructor(private readonly opts: AdapterClientOptions) {}

  async load(url: string, name: string, path: string): Promise<void> {
    const { status, text } = await this.post(`${url}/v1/load_lora_adapter`, { lora_name: name, lora_path: path });
    if (status === 200 || (status === 400 && ALREADY_LOADED.test(text))) return;
    throw new Error(`load answered ${status}: ${text.slice(0, 300)}`);
  }

  /** An adapter the replica no longer has (404) is unloaded too. */
  async unload(url: string, name: string): Promise<void> {
    const { status, text } = await this.post(`${url}/v1/unload_lora_adapter`, { lora_name: name });
    if (status !== 200 && status !== 404) throw new Error(`unload answered ${status}: ${text.slice(0, 300)}`);
  }

  /** The adapters the replica lists (cards with a `parent`), or undefined when it did not answer a listing. */
  async listed(url: string, timeoutMs: number): Promise<string[] | undefined> {
    const res = await request(`${url}/v1/models`, { dispatcher: this.opts.dispatcher, headers: this.headers(), signal: AbortSignal.timeout(timeoutMs) });
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    const parsed = ServedModelsSchema.safeParse(await res.body.json());
    return parsed.success ? parsed.data.data.filter((m) => m.parent).map((m) => m.id) : undefined;
  }

  private async post(url: string, body: object): Promise<{ status: number; text: string }> {
    const res = await request(url, {
      method: "POST",
      dispatcher: this.opts.dispatcher,
      headers: { ...this.headers(), "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.opts.timeoutMs),
    });
    return { status: res.statusCode, text: await res.body.text() };
  }

  private headers(): Record<string, string> {
    return this.opts.authorization ? { authorization: this.opts.authorization } : {};
  }
}
