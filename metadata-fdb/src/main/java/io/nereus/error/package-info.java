/**
 * The one error scheme of Nereus (STYLE §10): {@link io.nereus.error.NereusException} carrying an
 * {@link io.nereus.error.ErrorCode} with a retriable flag and a static message, plus key/value context, and
 * {@link io.nereus.error.Failures#unwrap} to find it under the wrappers of a failed future. The lowest layer:
 * every other Nereus package may use it, it uses none of them.
 */
package io.nereus.error;
