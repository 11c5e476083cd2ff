import { cutUsage, isUsageOnly } from "../../src/endpoints/stream-usage";
import { openAiStreaming } from "../../src/endpoints/chat-completions";

describe("cutUsage: vLLM's running usage cut from a chunk's text", () => {
  it.each([
    ['{"id":"c","choices":[{"delta":{"content":"hi"}}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}', '{"id":"c","choices":[{"delta":{"content":"hi"}}]}', 6],
    ['{"choices":[],"usage":{"prompt_tokens":5,"total_tokens":9,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}}', '{"choices":[]}', 9],
    ['{"usage":{"prompt_tokens":1},"choices":[{"text":"a"}],"x":1}', undefined, undefined],
    ['{"choices":[{"delta":{"content":"\\"usage\\":{"}}]}', undefined, undefined],
    ['{"choices":[{"text":"a"}],"usage":null}', undefined, undefined],
  ])("%s", (data, rest, total) => {
    const cut = cutUsage(data);
    expect(cut?.rest).toBe(rest);
    expect(cut?.usage.total_tokens).toBe(total);
    if (rest) expect(JSON.parse(rest)).toBeTruthy();
  });

  it("tells the usage-only chunk", () => {
    expect(isUsageOnly('{"choices":[],"usage":{}}')).toBe(true);
    expect(isUsageOnly('{"choices":[{"index":0}]}')).toBe(false);
  });
});

describe("which chunks are parsed for their usage (the rest have it cut from their text)", () => {
  it.each([
    ['{"id":"c","choices":[{"delta":{"content":"hi"}}],"usage":{"prompt_tokens":5}}', false],
    ['{"usage":{"prompt_tokens":1},"choices":[{"text":"a"}]}', true],
    ['{"choices":[{"delta":{"content":"\\"usage\\":{"}}]}', false],
    ['{"choices":[{"text":"a"}],"usage":null}', false],
    ['{"choices":[]}', false],
  ])("%s: %s", (data, parsed) => {
    expect(openAiStreaming.mayCarryUsage(data)).toBe(parsed);
  });
});
