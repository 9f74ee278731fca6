/**
 * Nereus metadata in FoundationDB: the value types, the key layout ({@link io.nereus.metadata.NereusKeyspace})
 * and the stores that read and change them in conditional transactions, one per job, handed out by
 * {@link io.nereus.metadata.MetadataStore}. The binary encodings of the stored values are in
 * {@link io.nereus.metadata.codec}. No Pulsar imports.
 */
package io.nereus.metadata;
