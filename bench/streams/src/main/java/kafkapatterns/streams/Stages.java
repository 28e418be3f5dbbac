package kafkapatterns.streams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * The stateless stages of kafka_patterns.jobs.pipeline and content_filter as Kafka
 * Streams topologies, record at a time: the same input and output topics, the same
 * records out (key, value, the stage's header) and the same dead letters, judged by the
 * same reading contract (ReadingContract). The content filter's thresholds and enrich's
 * profile fields are content_filter.py's and pipeline.py's, read from the rules file
 * (Rules.ContentFilter, Rules.Enrich). Schema tags are not checked: the topics the peers
 * are measured on carry no schema.
 */
public final class Stages {
    static final String SOURCE = "source";
    static final String LETTERS = "dead-letters";
    static final String PROFILES_STORE = "profiles";
    private static final ObjectMapper JSON = new ObjectMapper();
    private final ReadingContract contract;
    private final DeadLetters letters;
    private final Rules.ContentFilter filter;
    private final Rules.Enrich enrich;

    public Stages(Rules rules) {
        this.contract = new ReadingContract(rules.contract());
        this.letters = new DeadLetters(rules.deadLetters());
        this.filter = rules.contentFilter();
        this.enrich = rules.enrich();
    }

    /** What a stage does with a valid reading; a bad record is a dead letter. */
    @FunctionalInterface
    interface Route {
        void valid(ProcessorContext<byte[], byte[]> context, Record<byte[], byte[]> record, ObjectNode reading);
    }

    static final class Judged implements Processor<byte[], byte[], byte[], byte[]> {
        private final ReadingContract contract;
        private final DeadLetters letters;
        private final String job;
        private final Route route;
        private ProcessorContext<byte[], byte[]> context;

        Judged(ReadingContract contract, DeadLetters letters, String job, Route route) {
            this.contract = contract;
            this.letters = letters;
            this.job = job;
            this.route = route;
        }

        @Override
        public void init(ProcessorContext<byte[], byte[]> context) {
            this.context = context;
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            ReadingContract.Verdict verdict = contract.judge(record.value());
            if (verdict.valid()) {
                route.valid(context, record, verdict.reading());
            } else {
                context.forward(letters.letter(record, context.recordMetadata().orElseThrow(), verdict.reason(), job),
                                LETTERS);
            }
        }
    }

    static RecordHeaders header(String key, String value) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(key, value.getBytes(StandardCharsets.UTF_8));
        return headers;
    }

    private Topology judged(String job, String input, String deadletter, Route route, List<String[]> sinks) {
        Topology topology = new Topology();
        topology.addSource(SOURCE, new ByteArrayDeserializer(), new ByteArrayDeserializer(), input);
        topology.addProcessor(job, () -> new Judged(contract, letters, job, route), SOURCE);
        topology.addSink(LETTERS, deadletter, new ByteArraySerializer(), new ByteArraySerializer(), job);
        for (String[] sink : sinks) {  // {name, topic}
            topology.addSink(sink[0], sink[1], new ByteArraySerializer(), new ByteArraySerializer(), job);
        }
        return topology;
    }

    /** pipeline.clean: a valid reading unchanged to the cleaned topic. */
    public Topology clean(String job, String input, String cleaned, String deadletter) {
        Route route = (context, record, reading) ->
                context.forward(record.withHeaders(header("stage", "clean")), "cleaned");
        return judged(job, input, deadletter, route, List.<String[]>of(new String[] {"cleaned", cleaned}));
    }

    /** content_filter.route: a valid reading to the topic of every predicate it meets. */
    public Topology contentFilter(String job, String input, String heat, String frost, String deadletter) {
        Route route = (context, record, reading) -> {
            double t = reading.get("temperature").asDouble();
            if (t >= filter.heatC()) {
                context.forward(record.withHeaders(header("predicate", heat)), "heat");
            }
            if (t <= filter.frostC()) {
                context.forward(record.withHeaders(header("predicate", frost)), "frost");
            }
        };
        return judged(job, input, deadletter, route,
                      List.<String[]>of(new String[] {"heat", heat}, new String[] {"frost", frost}));
    }

    /** pipeline.enrich: a valid reading joined with its station's profile (the compacted
     * profile topic, keyed by station, as a global store: the last value per key, a
     * tombstone deletes), keyed by sensor; a station without one gets no profile fields. */
    public Topology enrich(String job, String input, String profiles, String enriched, String deadletter) {
        Route route = new Route() {
            private KeyValueStore<byte[], byte[]> store;

            @Override
            public void valid(ProcessorContext<byte[], byte[]> context, Record<byte[], byte[]> record,
                              ObjectNode reading) {
                if (store == null) {
                    store = context.getStateStore(PROFILES_STORE);
                }
                byte[] station = reading.get("station").textValue().getBytes(StandardCharsets.UTF_8);
                byte[] value = enrichedValue(reading, profile(store.get(station)));
                context.forward(record.withKey(reading.get("sensor").textValue().getBytes(StandardCharsets.UTF_8))
                                        .withValue(value).withHeaders(header("stage", "enrich")), "enriched");
            }
        };
        Topology topology = judged(job, input, deadletter, route,
                                   List.<String[]>of(new String[] {"enriched", enriched}));
        topology.addGlobalStore(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(PROFILES_STORE), Serdes.ByteArray(),
                                            Serdes.ByteArray()).withLoggingDisabled(),
                "profiles-source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), profiles,
                "profiles-update", () -> new ProfileUpdate());
        return topology;
    }

    static final class ProfileUpdate implements Processor<byte[], byte[], Void, Void> {
        private KeyValueStore<byte[], byte[]> store;

        @Override
        public void init(ProcessorContext<Void, Void> context) {
            store = context.getStateStore(PROFILES_STORE);
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            if (record.key() == null) {
                return;
            }
            if (record.value() == null) {
                store.delete(record.key());
            } else {
                store.put(record.key(), record.value());
            }
        }
    }

    /** A profile's JSON object, or null when there is none or it is not an object. */
    static JsonNode profile(byte[] value) {
        if (value == null) {
            return null;
        }
        try {
            JsonNode node = JSON.readTree(value);
            return node != null && node.isObject() ? node : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** The reading's fields typed as Spark's to_json writes them (an integer a long, a
     * number a double), then the profile's, a number a double, of another JSON type left
     * out as from_json makes it null (null fields left out, as to_json does). */
    byte[] enrichedValue(ObjectNode reading, JsonNode profile) {
        ObjectNode out = JSON.createObjectNode();
        for (String name : contract.fields()) {
            JsonNode v = reading.get(name);
            switch (contract.kind(name)) {
                case "integer" -> out.put(name, v.longValue());
                case "number" -> out.put(name, v.doubleValue());
                default -> out.put(name, v.textValue());
            }
        }
        if (profile != null) {
            for (String name : enrich.profileFields()) {
                JsonNode v = profile.get(name);
                if (v == null || v.isNull()) {
                    continue;
                }
                if (enrich.profileKinds().get(name).equals("number")) {
                    if (v.isNumber()) {
                        out.put(name, v.doubleValue());
                    }
                } else if (v.isTextual()) {
                    out.put(name, v.textValue());
                }
            }
        }
        try {
            return JSON.writeValueAsBytes(out);
        } catch (IOException e) {
            throw new IllegalStateException("an ObjectNode always serializes", e);
        }
    }
}
