/** Shared between the bench server and the harness (which must not import the server itself). */

/** Size of the bench server's `big` result: the "1 MB result". */
export const BIG_RESULT_BYTES = 1024 * 1024;
