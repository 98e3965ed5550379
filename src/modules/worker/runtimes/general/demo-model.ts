import { NoSuchModelError, type LanguageModel, type createProviderRegistry } from 'ai';

/**
 * The built-in `demo` provider: a deterministic language model that needs no key and no network, so the quick start
 * works offline. It streams `demo reply: <last user prompt>` word by word; it never calls tools.
 */
type DemoModel = Extract<LanguageModel, { specificationVersion: 'v4' }>;
type CallOptions = Parameters<DemoModel['doStream']>[0];
type StreamPart = Awaited<ReturnType<DemoModel['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;
type RegistryProvider = Parameters<typeof createProviderRegistry>[0][string];

/** The text of the last user or tool message of a prompt (the AI SDK's provider-level prompt shape). */
function lastInputText(prompt: CallOptions['prompt']): string {
  const last = prompt.findLast((m) => m.role === 'user' || m.role === 'tool');
  if (!last) return '';
  if (last.role === 'tool') return 'tool result received';
  return last.content.map((part) => (part.type === 'text' ? part.text : '')).join('').trim();
}

export function demoReply(prompt: string): string {
  return `demo reply: ${prompt}`;
}

function usage(inputWords: number, outputWords: number) {
  return {
    inputTokens: { total: inputWords, noCache: inputWords, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputWords, text: outputWords, reasoning: 0 },
  };
}

export function createDemoModel(modelId: string): DemoModel {
  return {
    specificationVersion: 'v4',
    provider: 'demo',
    modelId,
    supportedUrls: {},
    async doGenerate(options) {
      const input = lastInputText(options.prompt);
      const text = demoReply(input);
      return {
        content: [{ type: 'text', text }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: usage(input.split(/\s+/).length, text.split(' ').length),
        warnings: [],
      };
    },
    async doStream(options) {
      const input = lastInputText(options.prompt);
      const words = demoReply(input).split(/(?<= )/);
      const parts: StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 'demo-text' },
        ...words.map((delta): StreamPart => ({ type: 'text-delta', id: 'demo-text', delta })),
        { type: 'text-end', id: 'demo-text' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(input.split(/\s+/).length, words.length) },
      ];
      let i = 0;
      const stream = new ReadableStream<StreamPart>({
        pull(controller) {
          if (options.abortSignal?.aborted) return controller.error(options.abortSignal.reason);
          if (i < parts.length) controller.enqueue(parts[i++]);
          else controller.close();
        },
      });
      return { stream };
    },
  };
}

export const demoProvider: RegistryProvider = {
  specificationVersion: 'v4',
  languageModel: (modelId: string) => createDemoModel(modelId),
  embeddingModel: (modelId: string) => {
    throw new NoSuchModelError({ modelId, modelType: 'embeddingModel' });
  },
  imageModel: (modelId: string) => {
    throw new NoSuchModelError({ modelId, modelType: 'imageModel' });
  },
};
