/** The HS256 keys of one app: one that signs, and every one that verifies, current first. */
export interface SigningKeys {
  readonly signing: Uint8Array;
  /** Current first: a previous secret keeps issued tokens valid until they expire (rotation), never signs. */
  readonly verifying: readonly Uint8Array[];
}

function keyBytes(secret: string | Uint8Array): Uint8Array {
  return typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
}

/** The keys from the configured secret and, during a rotation, the one being rotated out. */
export function signingKeys(secret: string | Uint8Array, previousSecret?: string | Uint8Array): SigningKeys {
  const signing = keyBytes(secret);
  return { signing, verifying: previousSecret === undefined ? [signing] : [signing, keyBytes(previousSecret)] };
}
