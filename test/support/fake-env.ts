/**
 * The variables that send an app (or a child service) to these fakes: UPSTREAM_* with the heuristic
 * extractor for the upstream, LLM_* with the LLM extractor for the extraction LLM.
 */
export function fakeEnv(fakes: {
  upstream?: { url: string };
  anthropic?: boolean;
  upstreamKey?: string;
  llm?: { url: string };
}): Record<string, string> {
  const env: Record<string, string> = {};
  if (fakes.upstream !== undefined) {
    if (fakes.anthropic) env.UPSTREAM_PROVIDER = 'anthropic';
    env.UPSTREAM_BASE_URL = fakes.upstream.url;
    env.UPSTREAM_API_KEY = fakes.upstreamKey ?? 'sk-upstream';
    env.EXTRACTOR = 'heuristic';
  }
  if (fakes.llm !== undefined) {
    Object.assign(env, { LLM_BASE_URL: fakes.llm.url, LLM_API_KEY: 'sk-llm', EXTRACTOR: 'llm' });
  }
  return env;
}
