/** The server's plain HTTP answers: JSON bodies and the API's error body, each with a `request-id`. */
import type {ServerResponse} from 'node:http'

/** The error type the API gives with each status, unless a fault names its own. */
export const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'api_error',
  529: 'overloaded_error',
}

export function sendJson(res: ServerResponse, status: number, json: string, requestId: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
    'request-id': requestId,
    ...headers,
  })
  res.end(json)
}

/** An Anthropic error body (`{type: 'error', error: {type, message, details?}, request_id}`); `details.error_code` picks the SDK's error class. */
export function sendError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  requestId: string,
  headers: Record<string, string> = {},
  details?: {error_code: string},
): void {
  sendJson(res, status, JSON.stringify({type: 'error', error: {type, message, ...(details ? {details} : {})}, request_id: requestId}), requestId, headers)
}
