package kafkapatterns.streams;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rules the peers share with the Python jobs, read from the JSON file that
 * bench/streams_peer.py's rules_file() writes of the Python modules defining them
 * (--rules): none of their values is written in Java. Each part names the module that
 * holds it. Loaded once, into immutable fields; a file that cannot be read, is not JSON,
 * or lacks a key or holds one of another type fails at once, naming the key and the file.
 */
public record Rules(Contract contract, Letters deadLetters, ContentFilter contentFilter, Enrich enrich,
                    Aggregate aggregate) {
    /** The JSON kinds of a reading's fields the contract knows. */
    static final Set<String> KINDS = Set.of("string", "integer", "number");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The reading contract of kafka_patterns.runtime.readings (MAX_VALUE_BYTES,
     * MAX_STRING, MAX_DEPTH, MAX_NUMBER_DIGITS, FIELDS in order, KINDS, RANGES): an
     * integer field's range as longs, a number field's as doubles. */
    public record Contract(int maxValueBytes, int maxString, int maxDepth, int maxNumberDigits, List<String> fields,
                           Map<String, String> kinds, Map<String, LongRange> integerRanges,
                           Map<String, DoubleRange> numberRanges) {}

    /** lo..hi, both included. */
    public record LongRange(long lo, long hi) {
        boolean holds(long n) {
            return lo <= n && n <= hi;
        }
    }

    /** lo..hi, both included. */
    public record DoubleRange(double lo, double hi) {
        boolean holds(double n) {
            return lo <= n && n <= hi;
        }
    }

    /** A dead letter's shape, kafka_patterns.runtime.dead_letters: the names of HEADERS
     * (of the reason, the source's topic, partition and offset, and the job, in that
     * order), of TRUNCATION (of the flag, the original size and its SHA-256),
     * STORED_HEADER, LETTER_BUDGET and PREFIX_BYTES. */
    public record Letters(List<String> headers, List<String> truncation, String stored, int letterBudget,
                          int prefixBytes) {}

    /** kafka_patterns.jobs.content_filter's thresholds, HEAT_C and FROST_C (°C). */
    public record ContentFilter(double heatC, double frostC) {}

    /** kafka_patterns.jobs.pipeline's PROFILE_FIELDS, in order, and each one's JSON kind
     * (string or number) as pipeline.profile_schema types it. */
    public record Enrich(List<String> profileFields, Map<String, String> profileKinds) {}

    /** kafka_patterns.jobs.pipeline's WINDOW_MS and WATERMARK_MS. */
    public record Aggregate(long windowMs, long watermarkMs) {}

    /** A rules file that cannot be used, with why (the key, the file). */
    public static final class Invalid extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }

        Invalid(String message, Throwable cause) {
            super(message, cause);
        }
    }

    public static Rules load(String file) {
        Path path = Path.of(file);
        JsonNode root;
        try {
            root = JSON.readTree(Files.readAllBytes(path));
        } catch (IOException e) {
            throw new Invalid("rules file " + file + ": cannot be read as JSON (" + e.getMessage()
                              + "): bench/streams_peer.py's rules_file() writes it", e);
        }
        if (root == null || !root.isObject()) {
            throw new Invalid("rules file " + file + ": not a JSON object");
        }
        Reader r = new Reader(file, root);
        Contract contract = contract(r);
        Letters letters = new Letters(r.strings("deadLetters.headers", 5), r.strings("deadLetters.truncation", 3),
                                      r.text("deadLetters.stored"), r.integer("deadLetters.letterBudget"),
                                      r.integer("deadLetters.prefixBytes"));
        ContentFilter filter = new ContentFilter(r.decimal("contentFilter.heatC"), r.decimal("contentFilter.frostC"));
        List<String> profileFields = r.strings("enrich.profileFields", -1);
        Map<String, String> profileKinds = r.texts("enrich.profileKinds");
        for (String name : profileFields) {
            String kind = profileKinds.get(name);
            if (!"string".equals(kind) && !"number".equals(kind)) {
                throw r.invalid("enrich.profileKinds." + name, "string or number");
            }
        }
        Aggregate aggregate = new Aggregate(r.longInteger("aggregate.windowMs"),
                                            r.longInteger("aggregate.watermarkMs"));
        return new Rules(contract, letters, filter, new Enrich(profileFields, Map.copyOf(profileKinds)), aggregate);
    }

    private static Contract contract(Reader r) {
        List<String> fields = r.strings("contract.fields", -1);
        Map<String, String> kinds = r.texts("contract.kinds");
        if (!kinds.keySet().equals(Set.copyOf(fields))) {
            throw r.invalid("contract.kinds", "a kind for each of contract.fields " + fields + ", and no other");
        }
        kinds.forEach((name, kind) -> {
            if (!KINDS.contains(kind)) {
                throw r.invalid("contract.kinds." + name, "one of " + KINDS);
            }
        });
        Map<String, LongRange> integerRanges = new HashMap<>();
        Map<String, DoubleRange> numberRanges = new HashMap<>();
        JsonNode ranges = r.node("contract.ranges");
        if (!ranges.isObject()) {
            throw r.invalid("contract.ranges", "an object of field: [lo, hi]");
        }
        for (Map.Entry<String, JsonNode> e : ranges.properties()) {
            String key = "contract.ranges." + e.getKey();
            JsonNode range = e.getValue();
            if (!range.isArray() || range.size() != 2) {
                throw r.invalid(key, "[lo, hi]");
            }
            String kind = kinds.get(e.getKey());
            if ("integer".equals(kind) && isLong(range.get(0)) && isLong(range.get(1))) {
                integerRanges.put(e.getKey(), new LongRange(range.get(0).longValue(), range.get(1).longValue()));
            } else if ("number".equals(kind) && range.get(0).isNumber() && range.get(1).isNumber()) {
                numberRanges.put(e.getKey(), new DoubleRange(range.get(0).doubleValue(), range.get(1).doubleValue()));
            } else {
                throw r.invalid(key, "[lo, hi] of an integer field (64-bit integers) or of a number field");
            }
        }
        return new Contract(r.integer("contract.maxValueBytes"), r.integer("contract.maxString"),
                            r.integer("contract.maxDepth"), r.integer("contract.maxNumberDigits"), fields,
                            Map.copyOf(kinds), Map.copyOf(integerRanges), Map.copyOf(numberRanges));
    }

    private static boolean isLong(JsonNode node) {
        return node.isIntegralNumber() && node.canConvertToLong();
    }

    /** Values of the file by dotted key, each of the type it must be. */
    private record Reader(String file, JsonNode root) {
        Invalid invalid(String key, String want) {
            return new Invalid("rules file " + file + ": " + key + " must be " + want);
        }

        JsonNode node(String key) {
            JsonNode node = root;
            for (String part : key.split("\\.")) {
                node = node.isObject() ? node.get(part) : null;
                if (node == null || node.isNull()) {
                    throw new Invalid("rules file " + file + ": no key " + key);
                }
            }
            return node;
        }

        int integer(String key) {
            JsonNode node = node(key);
            if (!node.isIntegralNumber() || !node.canConvertToInt()) {
                throw invalid(key, "a 32-bit integer");
            }
            return node.intValue();
        }

        long longInteger(String key) {
            JsonNode node = node(key);
            if (!isLong(node)) {
                throw invalid(key, "a 64-bit integer");
            }
            return node.longValue();
        }

        double decimal(String key) {
            JsonNode node = node(key);
            if (!node.isNumber()) {
                throw invalid(key, "a number");
            }
            return node.doubleValue();
        }

        String text(String key) {
            JsonNode node = node(key);
            if (!node.isTextual()) {
                throw invalid(key, "a string");
            }
            return node.textValue();
        }

        /** A list of strings, of `size` of them unless it is negative. */
        List<String> strings(String key, int size) {
            JsonNode node = node(key);
            if (!node.isArray() || (size >= 0 && node.size() != size)) {
                throw invalid(key, size >= 0 ? "a list of " + size + " strings" : "a list of strings");
            }
            List<String> out = new ArrayList<>();
            for (JsonNode element : node) {
                if (!element.isTextual()) {
                    throw invalid(key, "a list of strings");
                }
                out.add(element.textValue());
            }
            return List.copyOf(out);
        }

        /** An object of strings. */
        Map<String, String> texts(String key) {
            JsonNode node = node(key);
            if (!node.isObject()) {
                throw invalid(key, "an object of strings");
            }
            Map<String, String> out = new HashMap<>();
            for (Map.Entry<String, JsonNode> e : node.properties()) {
                if (!e.getValue().isTextual()) {
                    throw invalid(key + "." + e.getKey(), "a string");
                }
                out.put(e.getKey(), e.getValue().textValue());
            }
            return out;
        }
    }
}
