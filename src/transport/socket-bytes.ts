import type { Socket } from 'node:net';

/**
 * Bytes written to the socket that the kernel has not taken yet. libuv's queue shrinks byte by
 * byte as the peer's window opens, while `writableLength` moves only when a whole write is done
 * (one 9 MB answer is one write). Over TLS, the TCP socket under the TLS one is where the
 * encrypted bytes wait. `writableLength` is the fallback should the handle not say.
 */
export function queuedBytes(socket: Socket): number {
  const queued = (socket as Socket & { _handle?: { writeQueueSize?: unknown } | null })._handle?.writeQueueSize;
  return typeof queued === 'number' ? queued : socket.writableLength;
}

/** Bytes of the writes the socket has finished: what it has moved to the kernel so far. */
export function sentBytes(socket: Socket): number {
  return (socket.bytesWritten ?? 0) - socket.writableLength;
}

/**
 * Closes a connection its client misuses with a reset: the kernel then drops what it still holds
 * for the peer at once, where a plain close would keep the unsent bytes of a client that does
 * not read in an orphaned socket until it gives up on the peer. A TLS socket (no TCP handle of
 * its own) is destroyed instead.
 */
export function resetConnection(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}
