package kafkapatterns.streams;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The reading contract of kafka_patterns.runtime.readings, a third time: the client
 * jobs' parser and the Spark jobs' implement it in Python and Spark SQL, this one for the
 * Kafka Streams peers. Its limits, fields, kinds and ranges are not written here: they
 * are readings.py's own, read from the rules file (Rules.Contract). One table of cases
 * holds the three implementations' checks equal (tests/unit/test_reading_contract.py). A
 * value is checked in this order, the first failing check its reason: size, UTF-8, JSON
 * (one text, nothing after it, no duplicate key, no lone surrogate, at most MAX_DEPTH
 * nested, no number of more than MAX_NUMBER_DIGITS digits), an object, every field
 * present and not null, then field by field: its JSON type, then for strings
 * 1..MAX_STRING code points and no control character, for numbers the range.
 */
public final class ReadingContract {
    private final Rules.Contract rules;
    // Strict where Python's json module is: no NaN, no trailing tokens, duplicate keys
    // refused; numbers of at most MAX_NUMBER_DIGITS digits, as Spark's parser reads them.
    private final ObjectMapper mapper;

    /** A valid reading's object, or why the value breaks the contract. */
    public record Verdict(ObjectNode reading, String reason) {
        public boolean valid() {
            return reason == null;
        }
    }

    public ReadingContract(Rules.Contract rules) {
        this.rules = rules;
        this.mapper = JsonMapper.builder(JsonFactory.builder()
                        .streamReadConstraints(StreamReadConstraints.builder()
                                .maxNestingDepth(rules.maxDepth()).maxNumberLength(rules.maxNumberDigits()).build())
                        .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
                        .build())
                .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .build();
    }

    /** A reading's fields, in the contract's order. */
    public List<String> fields() {
        return rules.fields();
    }

    /** A field's JSON kind: string, integer or number. */
    public String kind(String field) {
        return rules.kinds().get(field);
    }

    public Verdict judge(byte[] value) {
        if (value == null) {
            return refused("empty value");
        }
        if (value.length > rules.maxValueBytes()) {
            return refused("larger than " + rules.maxValueBytes() + " bytes");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(value)).toString();
        } catch (CharacterCodingException e) {
            return refused("not UTF-8");
        }
        JsonNode data;
        try {
            data = mapper.readTree(text);
        } catch (IOException e) {
            return refused("not JSON");
        }
        if (data == null || data.isMissingNode() || hasLoneSurrogate(data)) {
            return refused("not JSON");
        }
        if (!data.isObject()) {
            return refused("not a JSON object");
        }
        List<String> missing = rules.fields().stream().filter(f -> data.get(f) == null || data.get(f).isNull()).toList();
        if (!missing.isEmpty()) {
            return refused("missing " + String.join(",", missing));
        }
        for (String name : rules.fields()) {
            String error = fieldError(name, data.get(name));
            if (error != null) {
                return refused(error);
            }
        }
        return new Verdict((ObjectNode) data, null);
    }

    private static Verdict refused(String reason) {
        return new Verdict(null, reason);
    }

    /** Its JSON type as the contract names it: "integer" is a 64-bit integer written
     * without a fraction or exponent; a larger one is a number. */
    static String kindOf(JsonNode value) {
        if (value.isTextual()) {
            return "string";
        }
        if (value.isBoolean()) {
            return "boolean";
        }
        if (value.isIntegralNumber()) {
            return value.canConvertToLong() ? "integer" : "number";
        }
        if (value.isNumber()) {
            return "number";
        }
        return "object or array";
    }

    String fieldError(String name, JsonNode value) {
        String kind = kindOf(value);
        String want = kind(name);
        if (!(kind.equals(want) || (want.equals("number") && kind.equals("integer")))) {
            return name + " is not a" + (want.equals("integer") ? "n" : "") + " " + want;
        }
        if (want.equals("string")) {
            String text = value.textValue();
            int length = text.codePointCount(0, text.length());
            if (length < 1 || length > rules.maxString()) {
                return name + " is empty or longer than " + rules.maxString() + " characters";
            }
            if (text.chars().anyMatch(c -> c < 0x20 || c == 0x7F)) {
                return name + " has a control character";
            }
            return null;
        }
        if (want.equals("integer")) {
            Rules.LongRange range = rules.integerRanges().get(name);
            return range == null || range.holds(value.longValue()) ? null : name + " out of range";
        }
        Rules.DoubleRange range = rules.numberRanges().get(name);
        if (range == null) {
            return null;
        }
        if (value.isBigInteger()) {  // beyond 64 bits: beyond every range
            return name + " out of range";
        }
        return range.holds(value.doubleValue()) ? null : name + " out of range";
    }

    /** A string (key or value) with an unpaired UTF-16 surrogate: what an unpaired
     * \ud800-\udfff escape decodes to, not Unicode text. */
    static boolean hasLoneSurrogate(JsonNode node) {
        if (node.isTextual()) {
            return loneSurrogate(node.textValue());
        }
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> e : node.properties()) {
                if (loneSurrogate(e.getKey()) || hasLoneSurrogate(e.getValue())) {
                    return true;
                }
            }
            return false;
        }
        if (node.isArray()) {
            for (JsonNode element : node) {
                if (hasLoneSurrogate(element)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean loneSurrogate(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }
}
