/**
 * Another local user, standing in for an attacker: `nobody`. Only root can give a file to another
 * user (chown), so the tests that need one run as root (as CI does) and are skipped, saying why,
 * otherwise.
 */
export const NOBODY = 65534;

export const AS_ROOT: { skip?: string } = process.getuid?.() === 0 ? {} : { skip: 'giving a file to uid 65534 (chown) needs root; the cases without another user run as any user' };
