import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';
import { GRPC } from './transient-errors';

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];
type Call = ReturnType<Parameters<Interceptor>[1]>;
type Listener = NonNullable<Parameters<Call['start']>[1]>;
type Status = Parameters<NonNullable<Listener['onReceiveStatus']>>[0];

/** What a call made after the connection closed ends with (gRPC CANCELLED). */
export const CONNECTION_CLOSED = 'the connection to Temporal was closed before this call was made';

/**
 * The SDK's retry interceptor makes the next attempt of a failed call from a timer, and neither
 * an abort signal nor the call's cancel clears that timer. So a call cancelled while it waits to
 * retry (a diagnosis given up when the answer came, a request past the HTTP service's time limit,
 * any call during an outage) still makes its next attempt later, and if the connection has been
 * closed by then, grpc-js throws "Channel has been shut down" from the timer: an uncaught
 * exception that ends the process. Placed after the retry interceptor, this turns that throw into
 * the attempt ending with CANCELLED (which is not retried), so the call settles with an error its
 * caller may no longer be waiting for, and nothing is thrown where no one can catch it.
 */
export const closedConnectionGuard: Interceptor = (options, nextCall) => {
  let call: Call;
  try {
    call = nextCall(options);
  } catch (error) {
    if (!(error instanceof Error) || error.message !== 'Channel has been shut down') throw error;
    call = closedCall();
  }
  // The chain only uses the call's interface; the SDK's retry interceptor wraps what it gets.
  return call as unknown as ReturnType<Interceptor>;
};

/** A unary call that reaches no channel: it answers as grpc-js does for a failed one, no message, then CANCELLED. */
function closedCall(): Call {
  return {
    start(metadata, listener) {
      setImmediate(() => {
        listener?.onReceiveMessage?.(null);
        listener?.onReceiveStatus?.({ code: GRPC.CANCELLED as Status['code'], details: CONNECTION_CLOSED, metadata });
      });
    },
    sendMessage: () => undefined,
    sendMessageWithContext: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    cancelWithStatus: () => undefined,
    getPeer: () => '',
    getAuthContext: () => null,
  };
}

/**
 * The interceptors of this library's client connections: the SDK's retry of transient errors
 * (`retry` as for `defaultGrpcRetryOptions`), then {@link closedConnectionGuard}.
 */
export function connectionInterceptors(retry?: Parameters<typeof defaultGrpcRetryOptions>[0]): Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions(retry)), closedConnectionGuard];
}
