/** The error body of OpenAI's API, which the openai client reads into `APIError.message`, `type` and `code`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** The `type` OpenAI gives each kind of status, used when a script names none. */
export function errorTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/**
 * An error body in OpenAI's shape.
 *
 * @example openAIError(400, 'this scripted model does not stream', 'stream_unsupported')
 */
export function openAIError(status: number, message: string, code: string | null, type = errorTypeFor(status)): OpenAIErrorBody {
  return { error: { message, type, param: null, code } };
}
