/**
 * The object store: a small asynchronous interface ({@link io.nereus.object.ObjectStore}: put a new object under a
 * name that is never overwritten, ranged get, delete, list by prefix) with a local filesystem implementation, the
 * embedded default, and an S3 one over the AWS SDK for Java v2. Objects hold higher generations; they are garbage
 * until a FoundationDB transaction publishes them. No Pulsar or FoundationDB imports.
 */
package io.nereus.object;
