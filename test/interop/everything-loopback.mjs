#!/usr/bin/env node
/**
 * Runs @modelcontextprotocol/server-everything's OWN Streamable HTTP or SSE entry point
 * (`dist/transports/streamableHttp.js` / `sse.js`, its express app and session handling
 * unchanged), but bound to 127.0.0.1 on a free port.
 *
 * Why a wrapper: those entry points call `app.listen(process.env.PORT || 3001)`, which listens
 * on every interface, and the tests may only use the loopback interface. Rather than re-host the
 * server factory with our own transports (which would test our hosting, not theirs), this patches
 * `net.Server.prototype.listen` before the entry point is imported, so that every listen in this
 * process binds 127.0.0.1, and reports the address it got.
 *
 * Usage: node test/interop/everything-loopback.mjs streamableHttp|sse
 * Prints `LISTENING <address> <port>` on stderr once bound (stdout carries the server's own
 * chatter). Exits when its stdin closes, so it cannot outlive the test process that started it.
 */
import net from 'node:net';
import process from 'node:process';

const LOOPBACK = '127.0.0.1';
const ENTRY_POINTS = { streamableHttp: 'streamableHttp.js', sse: 'sse.js' };

const mode = process.argv[2] ?? '';
const entry = ENTRY_POINTS[mode];
if (entry === undefined) {
  process.stderr.write(`usage: everything-loopback.mjs ${Object.keys(ENTRY_POINTS).join('|')}\n`);
  process.exit(2);
}

/** A port given as a number or a numeric string (`listen('0')` is a port, not a pipe). */
function isPort(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));
}

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  const [first] = args;
  if (typeof first === 'object' && first !== null && !Array.isArray(first)) {
    args[0] = { ...first, host: LOOPBACK };
  } else if (isPort(first)) {
    // listen(port[, host][, backlog][, callback]): replace or insert the host.
    if (typeof args[1] === 'string') args[1] = LOOPBACK;
    else args.splice(1, 0, LOOPBACK);
  } else {
    throw new Error(`everything-loopback: refusing listen(${String(first)}): only TCP ports on ${LOOPBACK}`);
  }
  this.once('listening', () => {
    const address = this.address();
    if (address !== null && typeof address === 'object') {
      process.stderr.write(`LISTENING ${address.address} ${address.port}\n`);
    }
  });
  return listen.apply(this, args);
};

// The entry points read PORT; 0 asks the OS for a free port, so parallel runs never collide.
process.env.PORT = process.env.PORT ?? '0';

// No orphan: when the parent (the test process) goes away, its end of our stdin closes.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();

await import(`@modelcontextprotocol/server-everything/dist/transports/${entry}`);
