/** A fetch that answers from a script, recording each request; for tests without a network. */
export type Answer = Response | Error | ((request: Request) => Response | Promise<Response>);

export function scriptedFetch(...answers: Answer[]) {
  const requests: Request[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    requests.push(request);
    const answer = answers.length > 1 ? answers.shift() : answers[0];
    if (answer === undefined) throw new Error("scriptedFetch: no answer scripted");
    if (answer instanceof Error) throw answer;
    // Cloned, so the last answer can be served again.
    return typeof answer === "function" ? answer(request) : answer.clone();
  };
  return { fetch, requests };
}

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

export function apiError(status: number, code: string, message = `${code} happened`): Response {
  return json(status, { error: { code, message } });
}

/** A sleep that returns at once and remembers the delays asked for. */
export function recordingSleep() {
  const delays: number[] = [];
  const sleep = async (ms: number) => {
    delays.push(ms);
  };
  return { sleep, delays };
}
