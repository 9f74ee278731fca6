/**
 * The Kafka adapter at the storage level (DESIGN §9): a Kafka partition's log on one Nereus stream. Each v2
 * RecordBatch is validated with kafka-clients' own record classes, given its offsets by rewriting its base offset
 * (which its CRC does not cover) and stored as one ranged entry covering {@code lastOffsetDelta + 1} offsets; a fetch
 * of any offset returns the whole batch holding it (containing-entry reads). Idempotent producers are deduplicated
 * against state kept beside the stream in the metadata store. No Pulsar and no FoundationDB imports; see
 * {@code docs/kafka.md}.
 */
package io.nereus.kafka;
