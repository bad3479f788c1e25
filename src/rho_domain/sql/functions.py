"""The functions a read-only statement may call, per dialect: allowlists, as data.

A function call is the one place where a SELECT can act: ``dblink_exec`` opens its own
session and commits, ``pg_read_file`` reads server files, ``pg_advisory_lock`` leaves a lock
on the reused connection, Vertica's ``CLOSE_ALL_SESSIONS`` and MySQL's ``GET_LOCK`` change
server state. A denylist always misses one, so the classifier accepts a call only when the
name is on its dialect's list; everything else is refused with a message saying how
to allow it (``options.allowed_functions`` of the alias, for a vetted user function).

Each list is taken from the engine's function reference, chapter by chapter (aggregate,
window, string, numeric, date/time, JSON, conditional, conversion, system information),
keeping only functions that compute a value from their arguments and the catalog. Left out
on purpose: file and program access, locks, sleeps, sequences, session or server settings,
signals, replication, anything that runs a SQL string (``query_to_xml``, ``dblink``),
anything that loads code. Names are stored the way the engine's catalog spells them:
lower case, except Oracle (upper case).

PostgreSQL's list, the longest, and its side-effect prefixes are ``postgres_functions.py``'s;
every other list is here, with ``COMMON`` and ``STANDARD`` (the standard functions the lists
share) and ``names``, which writes them. The keywords before ``(`` that call nothing are
``call_words.py``'s.
"""

from __future__ import annotations


def names(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``: one list of names, as data."""
    return frozenset(text.split())


# Functions every engine here builds in (SQL standard aggregates, window and scalar
# functions). A name on a list must be built into that engine: an unknown name would resolve
# to a user function of the same name (MySQL, Oracle, PostgreSQL look in the user's schema).
COMMON = """
    cast coalesce nullif greatest least extract trim
    count sum avg min max stddev stddev_pop stddev_samp variance var_pop var_samp
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value
    last_value nth_value lower upper abs ceil floor round sign sqrt exp ln log power mod
"""
STANDARD = (
    COMMON
    + """
    position substring overlay every ceiling covar_pop covar_samp corr regr_avgx regr_avgy
    regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
    percentile_cont percentile_disc
"""
)

# PostgreSQL names parsed by the grammar, not looked up in pg_proc, in every version from 12
# (the adapter keeps only the allowlisted names that pg_catalog of the server defines, plus
# these, so a name the server lacks never resolves to a user function of the same name).
POSTGRES_GRAMMAR = names(
    """
    cast coalesce greatest least nullif extract position substring trim overlay treat
    normalize current_date current_time current_timestamp localtime localtimestamp
    current_catalog current_role current_schema current_user session_user user
    xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlparse xmlpi xmlroot
    xmlserialize xmltable
    """
)
POSTGRES_GRAMMAR_16 = names(
    "json_array json_arrayagg json_object json_objectagg json_scalar json_serialize"
)
POSTGRES_GRAMMAR_17 = names("json_query json_value json_exists json_table")
# SQLite 3.40+: core, date/time, aggregate, window, math and JSON functions, and the
# introspection table-valued pragmas, and the full-text tables' MATCH and auxiliary functions
# (FTS5's bm25, highlight, snippet; FTS3/4's offsets, snippet, matchinfo: outside a full-text
# query they only fail). Not listed: load_extension, fts3_tokenizer,
# readfile, writefile, edit, zipfile (shell/extension functions).
SQLITE_FUNCTIONS = names(
    STANDARD
    + """
    changes char coalesce concat concat_ws format glob hex ifnull iif instr last_insert_rowid
    length like likelihood likely ltrim nullif octet_length printf quote random randomblob
    replace rtrim soundex sqlite_compileoption_get sqlite_compileoption_used
    sqlite_offset sqlite_source_id sqlite_version substr total_changes trim typeof
    unhex unicode unlikely zeroblob
    date time datetime julianday unixepoch strftime timediff
    group_concat string_agg total
    acos acosh asin asinh atan atan2 atanh cos cosh degrees log10 log2 pi pow radians
    sin sinh tan tanh trunc
    json json_array json_array_length json_error_position json_extract json_insert
    json_object json_patch json_pretty json_remove json_replace json_set json_type
    json_valid json_quote json_group_array json_group_object json_each json_tree jsonb
    jsonb_array jsonb_extract jsonb_insert jsonb_object jsonb_patch jsonb_remove
    jsonb_replace jsonb_set jsonb_group_array jsonb_group_object
    pragma_table_info pragma_table_xinfo pragma_index_list pragma_index_info
    pragma_index_xinfo pragma_foreign_key_list generate_series -> ->>
    match bm25 highlight snippet offsets matchinfo
    """
)

# MariaDB 10.11 / MySQL 8 function reference: string, numeric, date and time, aggregate,
# window, control flow, JSON, conversion, information (read-only ones), encryption and
# hashing, miscellaneous. Not listed: LOAD_FILE, SLEEP, BENCHMARK, GET_LOCK and the other
# lock functions, *_POS_WAIT, NEXTVAL/SETVAL/LASTVAL, LAST_INSERT_ID (with an argument it
# sets session state), UUID_SHORT (it advances a counter the whole server shares, as
# NEXTVAL a sequence), sys_exec/sys_eval, any stored function, and DEFAULT(col), which
# computes the column's default expression (DEFAULT (UUID_SHORT()) advances that counter).
MYSQL_FUNCTIONS = names(
    COMMON
    + """
    position substring ceiling
    ascii bin bit_length char char_length character_length chr concat concat_ws elt
    export_set field find_in_set format from_base64 hex insert instr lcase left length
    length locate lpad ltrim make_set mid natural_sort_key oct octet_length ord quote
    regexp_instr regexp_like regexp_replace regexp_substr repeat replace reverse right
    rpad rtrim sformat soundex space strcmp substr substring_index to_base64 to_char
    ucase unhex weight_string collation charset coercibility
    now bit_count acos asin atan atan2 conv cos cot crc32 degrees log10 log2 pi pow radians rand sin
    tan truncate
    adddate addtime convert_tz curdate current_date current_time current_timestamp curtime
    date date_add date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear
    from_days from_unixtime get_format hour last_day localtime localtimestamp makedate
    maketime microsecond minute month monthname period_add period_diff quarter
    sec_to_time second str_to_date subdate subtime sysdate time time_format time_to_sec
    timediff timestamp timestampadd timestampdiff to_days to_seconds unix_timestamp
    utc_date utc_time utc_timestamp week weekday weekofyear year yearweek
    bit_and bit_or bit_xor group_concat json_arrayagg json_objectagg std median
    if ifnull isnull interval percentile_cont percentile_disc
    json_array json_array_append json_array_insert json_compact
    json_contains json_contains_path json_depth json_detailed json_equals json_exists
    json_extract json_insert json_keys json_length json_loose json_merge
    json_merge_patch json_merge_preserve json_normalize json_object json_overlaps json_pretty
    json_query json_quote json_remove
    json_replace json_search json_set json_table json_type json_unquote
    json_valid json_value
    convert binary
    connection_id current_role current_user database found_rows row_count schema
    session_user system_user user version
    aes_decrypt aes_encrypt compress md5 random_bytes sha sha1 sha2 uncompress
    uncompressed_length
    inet_aton inet_ntoa inet6_aton inet6_ntoa is_ipv4 is_ipv4_compat
    is_ipv4_mapped is_ipv6 name_const uuid sys_guid
    column_check column_create column_exists column_get column_json column_list
    decode_histogram
    st_area st_asbinary st_astext st_aswkb st_aswkt st_buffer st_centroid st_contains
    st_crosses st_difference st_dimension st_disjoint st_distance st_endpoint
    st_envelope st_equals st_exteriorring st_geometryn st_geometrytype st_geomfromtext
    st_geomfromwkb st_interiorringn st_intersection st_intersects st_isclosed st_isempty
    st_isring st_issimple st_length st_numgeometries st_numinteriorrings st_numpoints
    st_overlaps st_pointn st_pointfromtext st_srid st_startpoint st_symdifference
    st_touches st_union st_within st_x st_y
    """
)

# Built into only one of the two servers; on the other the name would resolve to a stored
# function of the current database, so the adapter drops the other flavour's names.
MARIADB_ONLY = names(
    """
    natural_sort_key sformat to_char sys_guid chr column_check column_create column_exists
    column_get column_json column_list decode_histogram median percentile_cont
    percentile_disc json_detailed json_loose json_compact json_equals json_normalize
    json_exists json_query
    """
)
MYSQL_ONLY = names(
    """
    regexp_like json_schema_valid any_value bin_to_uuid uuid_to_bin is_uuid format_bytes
    format_pico_time
    json_storage_size json_storage_free icu_version
    """
)

MYSQL_FUNCTIONS |= MYSQL_ONLY

# No stored function is trusted by its name, the ``sys`` schema's formatters
# (``sys.format_bytes``...) included: an administrator may replace one, under any definer,
# ``mariadb.sys`` too (``CREATE DEFINER``), and what a definer or a name says proves nothing
# about its body. An alias vets one with ``options.allowed_functions``.

# Oracle Database SQL Language Reference, "Functions" (single-row, aggregate, analytic,
# JSON). Not listed: any package call (DBMS_*, UTL_*, HTTPURITYPE ...), which is refused
# unless allowed per alias, and XMLTYPE, which parses the text it is given, DOCTYPE and all:
# an external entity in it was fetched by the server (CVE-2014-6577, out-of-band requests
# carrying query results, and any account may call it). Oracle stores names in upper case.
ORACLE_FUNCTIONS = frozenset(
    name.upper()
    for name in names(
        COMMON
        + """
        covar_pop covar_samp corr regr_avgx regr_avgy regr_count regr_intercept regr_r2
        regr_slope regr_sxx regr_sxy regr_syy percentile_cont percentile_disc
        add_months ascii asciistr bin_to_num bitand cardinality chartorowid chr compose
        concat convert cosh cos sin sinh tan tanh acos asin atan atan2 current_date
        current_timestamp dbtimezone decode decompose dump empty_blob empty_clob
        from_tz group_id grouping_id hextoraw initcap instr last_day length
        listagg lnnvl localtimestamp lpad ltrim median months_between nanvl new_time
        next_day nls_charset_id nls_charset_name nls_initcap nls_lower nls_upper nlssort
        numtodsinterval numtoyminterval nvl nvl2 ora_hash rawtohex regexp_count
        regexp_instr regexp_like regexp_replace regexp_substr remainder replace
        round rowidtochar rpad rtrim sessiontimezone soundex standard_hash
        stats_mode substr sys_context sys_extract_utc sys_guid sysdate systimestamp
        to_binary_double to_binary_float to_char to_clob to_date to_dsinterval
        to_lob to_multi_byte to_nchar to_nclob to_number to_single_byte to_timestamp
        to_timestamp_tz to_yminterval translate trunc tz_offset uid unistr user
        validate_conversion vsize width_bucket ratio_to_report collect
        json_array json_arrayagg json_object json_objectagg json_query json_serialize
        json_table json_value json_exists json_mergepatch json_transform
        xmlagg xmlelement xmlforest xmlattributes xmlserialize xmltable
        approx_count_distinct approx_median approx_percentile
        """
    )
)

# Vertica SQL Reference "SQL functions" (aggregate, analytic, date/time, formatting,
# mathematical, string, regular expression, NULL handling, JSON/flex readers). Meta-
# functions (CLOSE_ALL_SESSIONS, EXPORT_OBJECTS, PURGE_TABLE, DO_TM_TASK, ...) are not
# listed: they act on the server, so they are refused.
VERTICA_FUNCTIONS = names(
    COMMON
    + """
    position substring overlay ceiling covar_pop covar_samp corr regr_avgx regr_avgy
    regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
    percentile_cont percentile_disc
    approximate_count_distinct approximate_median approximate_percentile bit_and
    bit_or bit_xor bool_and bool_or bool_xor listagg argmax argmin argmax_agg argmin_agg
    conditional_change_event conditional_true_event exponential_moving_average
    median ratio_to_report
    add_months age_in_months age_in_years clock_timestamp current_date current_time
    current_timestamp date date_part date_trunc datediff day dayofmonth dayofweek
    dayofweek_iso dayofyear days extract getdate getutcdate hour isfinite
    last_day localtime localtimestamp microsecond midnight_seconds minute month
    months_between new_time next_day now overlaps quarter round second
    statement_timestamp sysdate time_slice timeofday timestampadd timestampdiff
    transaction_timestamp trunc week week_iso year year_iso to_char to_date to_timestamp
    to_timestamp_tz to_number
    cbrt cos cosh cot degrees distance distancev exp factorial hash isinf isnan ln log
    log10 pi radians random randomint sin sinh tan tanh width_bucket acos asin atan atan2
    ascii bit_length bitcount bitstring_to_binary btrim char_length character_length chr
    collation concat decode edit_distance greatest greatestb hex_to_binary hex_to_integer
    initcap initcapb inet_aton inet_ntoa insert instr instrb isutf8 leastb left length
    lengthb lpad ltrim md5 octet_length overlayb positionb quote_ident quote_literal
    quote_nullable repeat replace right rpad rtrim sha1 sha224 sha256 sha384 sha512
    space split_part split_partb strpos strposb substr substrb to_base64 from_base64
    to_bitstring to_hex translate upper upperb lowerb v6_atoi v6_ntoa v6_subnetn
    regexp_count regexp_ilike regexp_instr regexp_like regexp_not_ilike regexp_not_like
    regexp_replace regexp_substr
    ifnull isnull nullifzero nvl nvl2 zeroifnull
    current_database current_schema current_user session_user user username version
    has_table_privilege has_schema_privilege
    maplookup mapcontainskey mapcontainsvalue mapkeys mapsize mapvalues maptostring
    mapjsonextractor mapitems explode implode apply_count_elements array_length
    array_contains array_find contains
    uuid_generate
    """
)
