package io.nereus.metadata;

/**
 * How the generation index refers to a stream object ({@link CollectionStore#objectReference}).
 * <ul>
 *   <li>{@link #LIVE}: a record of the lookup or FALLBACK space targets it (COMMITTED or QUARANTINED): keep it;</li>
 *   <li>{@link #RETIRED}: only RETIRED records target it: garbage once the grace period for reads has passed, then
 *       those records are forgotten;</li>
 *   <li>{@link #NONE}: no record targets it (never published, or its stream is gone): garbage once older than the
 *       grace period.</li>
 * </ul>
 */
public enum ObjectReference {
    LIVE,
    RETIRED,
    NONE
}
