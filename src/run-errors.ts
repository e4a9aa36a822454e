/** The codes a run's `errorCode` takes, for scripts that act on why a run failed; never reused, like errors.ts. */
export const RUN_ERRORS = {
  interrupted: { status: 'failed', summary: 'the gateway stopped (crash, kill) while the run was in progress; it is not re-run, since its reply may already have gone out' },
  model_timeout: { status: 'timed_out', summary: 'the run\'s time limit (timeoutSeconds, else agent.timeoutSeconds) passed before the model answered, retries included' },
  model_unreachable: { status: 'failed', summary: 'no connection to the model server at agent.baseUrl (refused, reset, DNS), after retries' },
  model_http: { status: 'failed', summary: 'the model server answered an HTTP error: at once for 4xx, after retries for 429 and 5xx; the message has the status, the server\'s error code and what to check (a 404 of the endpoint: agent.baseUrl, which usually ends in /v1; model_not_found: the model; 401/403: agent.apiKey)' },
  model_empty_reply: { status: 'failed', summary: 'the model answered with no text' },
  model_refused: { status: 'failed', summary: 'the model refused to answer' },
  model_failed: { status: 'failed', summary: 'the model call failed in another way (an answer that is not Chat Completions JSON, …); details are in the log' },
  no_recipient: { status: 'succeeded', summary: 'the reply was not delivered: no provider or address to send it to (set session.provider/session.to, or give provider and to)' },
  delivery_failed: { status: 'succeeded', summary: 'the reply was not delivered: the provider refused it (a 4xx), or it could not be reached within delivery.maxAttempts attempts; the message says which. Set once the delivery has settled (run.delivery.status failed)' },
  forward_failed: { status: 'failed', summary: 'forward mode: the upstream gateway refused the action (a 4xx other than 408 and 429), or could not be reached within delivery.maxAttempts attempts; the message has its status and its own reason' },
} as const satisfies Record<string, { status: 'failed' | 'timed_out' | 'succeeded'; summary: string }>;

export type RunErrorCode = keyof typeof RUN_ERRORS;

/** A run's failure: the stable code and the text shown beside it (never a secret). */
export interface RunError {
  code: RunErrorCode;
  message: string;
}
