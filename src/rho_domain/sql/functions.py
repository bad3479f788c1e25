"""The functions a read-only statement may call, per dialect: allowlists, as data.

A function call is the one place where a SELECT can act: ``dblink_exec`` opens its own
session and commits, ``pg_read_file`` reads server files, ``pg_advisory_lock`` leaves a lock
on the reused connection, Vertica's ``CLOSE_ALL_SESSIONS`` and MySQL's ``GET_LOCK`` change
server state. A denylist always misses one, so the classifier accepts a call only when the
name is on its dialect's list below; everything else is refused with a message saying how
to allow it (``options.allowed_functions`` of the alias, for a vetted user function).

Each list is taken from the engine's function reference, chapter by chapter (aggregate,
window, string, numeric, date/time, JSON, conditional, conversion, system information),
keeping only functions that compute a value from their arguments and the catalog. Left out
on purpose: file and program access, locks, sleeps, sequences, session or server settings,
signals, replication, anything that runs a SQL string (``query_to_xml``, ``dblink``),
anything that loads code. Names are stored the way the engine's catalog spells them:
lower case, except Oracle (upper case).

Keywords before ``(`` that do not call anything are recognised three ways:
``RESERVED_PARENS`` can never name a function (reserved in every engine here), so they are
never calls; ``AFTER_OPERAND`` (``JOIN (``, ``OVER (``, ``FILTER (``, ``LIKE (`` ...) can
name a user function in PostgreSQL, so they are exempt only right after an operand, where a
call cannot start; ``TYPE_WORDS`` (``VARCHAR(10)``) are exempt only where a type is
expected (after ``AS``, ``::`` or another type word).
"""

from __future__ import annotations


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


RESERVED_PARENS = _names(
    """
    ALL AND AS DISTINCT ELSE FOR FROM GROUP HAVING IN INTERSECT NOT ON OR ORDER SELECT
    THEN UNION WHERE WITH
    """
)
# Reserved, so never a function name, in one engine only (from each engine's keyword list).
RESERVED_POSTGRES = RESERVED_PARENS | _names(
    "ANY SOME BETWEEN CASE EXCEPT EXISTS LIMIT USING VALUES WHEN ARRAY ROW LATERAL OFFSET "
    "WINDOW FETCH ONLY"
)
RESERVED_MYSQL = RESERVED_PARENS | _names(
    "BETWEEN CASE EXCEPT EXISTS LIMIT USING VALUES WHEN MATCH KEY INDEX FORCE IGNORE REGEXP "
    "RLIKE LATERAL PARTITION WINDOW"
)
RESERVED_ORACLE = RESERVED_PARENS | _names("ANY BETWEEN EXISTS VALUES MINUS PRIOR")
RESERVED_VERTICA = RESERVED_PARENS | _names(
    "ANY SOME CASE EXCEPT LIMIT USING WHEN ARRAY OFFSET WINDOW JOIN MATCH MINUS"
)
AFTER_OPERAND = _names(
    """
    AGAINST COLUMNS FILTER FORCE IGNORE ILIKE INDEX IS JOIN KEY LIKE MATCH OVER USING BETWEEN
    PARTITION REGEXP RLIKE REPEATABLE SIMILAR SYSTEM BERNOULLI TABLESAMPLE MATERIALIZED
    PIVOT UNPIVOT KEEP WINDOW LATERAL OFFSET ARRAY ROW ROLLUP CUBE SETS MINUS
    """
)
TYPE_WORDS = _names(
    """
    VARCHAR CHAR CHARACTER VARYING NCHAR NVARCHAR VARCHAR2 NVARCHAR2 NUMERIC DECIMAL DEC
    NUMBER FLOAT REAL DOUBLE PRECISION INT INTEGER SMALLINT BIGINT TINYINT MEDIUMINT
    TIMESTAMP TIME DATETIME INTERVAL BIT VARBIT BINARY VARBINARY RAW UNSIGNED SIGNED
    LONG VECTOR ZONE
    """
)
# Words after which an expression starts: a word in AFTER_OPERAND that follows one of these
# is in call position (``SELECT over(1)`` calls a function named ``over``).
EXPRESSION_STARTS = _names(
    """
    SELECT DISTINCT ALL WHERE AND OR NOT ON THEN ELSE WHEN BY HAVING FROM JOIN LATERAL
    CASE BETWEEN LIKE ILIKE IN IS ANY SOME EXISTS USING LIMIT OFFSET RETURNING VALUES
    ROW ARRAY TO ESCAPE SIMILAR UNION EXCEPT INTERSECT MINUS WITH SET OVER PARTITION
    ORDER GROUP FILTER WITHIN RECURSIVE TABLE ONLY DIV MOD XOR REGEXP RLIKE SEPARATOR
    INTERVAL UNIQUE PRIOR CONNECT START MATCH AGAINST FIRST NEXT ZONE AT LOCAL OVERLAPS
    SYMMETRIC ASYMMETRIC BOTH LEADING TRAILING PLACING FOR OPERATOR PASSING REF VALUE
    DEFAULT PATH CASE ANY SOME EXCEPT ELSE THEN DISTINCT HAVING EXISTS NOT
    """
)


# Functions every engine here builds in (SQL standard aggregates, window and scalar
# functions). A name on a list must be built into that engine: an unknown name would resolve
# to a user function of the same name (MySQL, Oracle, PostgreSQL look in the user's schema).
_COMMON = """
    cast coalesce nullif greatest least extract trim
    count sum avg min max stddev stddev_pop stddev_samp variance var_pop var_samp
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value
    last_value nth_value lower upper abs ceil floor round sign sqrt exp ln log power mod
"""
_STANDARD = (
    _COMMON
    + """
    position substring overlay every ceiling covar_pop covar_samp corr regr_avgx regr_avgy
    regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
    percentile_cont percentile_disc
"""
)

# PostgreSQL 15, chapter 9 (functions and operators), plus the catalog-reading helpers of
# 9.26 (system information). Not listed (9.27 system administration, 9.17 sequences,
# 9.27.9 file access, 9.27.10 advisory locks, 9.15.4 query_to_xml & co., ts_rewrite and
# ts_stat (they run a query given as text), pg_sleep*,
# set_config, txid_current*, lo_*, dblink*): refused.
POSTGRES_FUNCTIONS = _names(
    _STANDARD
    + """
    bool_and bool_or bit_and bit_or bit_xor array_agg string_agg json_agg jsonb_agg
    json_object_agg jsonb_object_agg xmlagg mode range_agg range_intersect_agg any_value
    num_nonnulls num_nulls
    cbrt degrees radians div factorial gcd lcm log10 min_scale scale trim_scale pi
    trunc width_bucket acos acosd asin asind atan atand atan2 atan2d cos cosd cot cotd
    sin sind tan tand sinh cosh tanh asinh acosh atanh random
    ascii bit_length btrim char_length character_length chr concat concat_ws format
    initcap left length lpad ltrim md5 normalize octet_length parse_ident quote_ident
    quote_literal quote_nullable regexp_count regexp_instr regexp_like regexp_match
    regexp_matches regexp_replace regexp_split_to_array regexp_split_to_table regexp_substr
    repeat replace reverse right rpad rtrim split_part starts_with string_to_array
    string_to_table strpos substr to_ascii to_hex translate unistr convert convert_from
    convert_to decode encode get_bit get_byte set_bit set_byte sha224 sha256 sha384 sha512
    bit_count to_char to_date to_number to_timestamp
    age clock_timestamp current_date current_time current_timestamp date_bin date_part
    date_trunc isfinite justify_days justify_hours justify_interval localtime
    localtimestamp make_date make_interval make_time make_timestamp make_timestamptz now
    statement_timestamp timeofday transaction_timestamp timezone
    enum_first enum_last enum_range
    area center diameter height isclosed isopen npoints pclose popen radius width box
    circle line lseg path point polygon bound_box
    abbrev broadcast family host hostmask inet_merge inet_same_family masklen netmask
    network set_masklen text inet cidr macaddr8_set7bit
    array_to_tsvector get_current_ts_config numnode plainto_tsquery phraseto_tsquery
    websearch_to_tsquery querytree setweight strip to_tsquery to_tsvector
    json_to_tsvector jsonb_to_tsvector ts_delete ts_filter ts_headline ts_rank ts_rank_cd
    tsquery_phrase tsvector_to_array ts_debug ts_lexize ts_parse ts_token_type
    gen_random_uuid
    xmlcomment xmlconcat xmlelement xmlforest xmlpi xmlroot xmlexists xml_is_well_formed
    xml_is_well_formed_document xml_is_well_formed_content xpath xpath_exists xmlparse
    xmlserialize xmltable xmlattributes xmltext
    to_json to_jsonb array_to_json row_to_json json_build_array jsonb_build_array
    json_build_object jsonb_build_object json_object jsonb_object json_array_elements
    jsonb_array_elements json_array_elements_text jsonb_array_elements_text
    json_array_length jsonb_array_length json_each jsonb_each json_each_text
    jsonb_each_text json_extract_path jsonb_extract_path json_extract_path_text
    jsonb_extract_path_text json_object_keys jsonb_object_keys json_populate_record
    jsonb_populate_record json_populate_recordset jsonb_populate_recordset
    json_to_record jsonb_to_record json_to_recordset jsonb_to_recordset json_strip_nulls
    jsonb_strip_nulls jsonb_set jsonb_set_lax jsonb_insert jsonb_path_exists
    jsonb_path_match jsonb_path_query jsonb_path_query_array jsonb_path_query_first
    jsonb_path_exists_tz jsonb_path_match_tz jsonb_path_query_tz
    jsonb_path_query_array_tz jsonb_path_query_first_tz jsonb_pretty json_typeof
    jsonb_typeof json_array json_scalar json_serialize json_query json_value json_exists
    json_table
    currval
    array_append array_cat array_dims array_fill array_length array_lower
    array_ndims array_position array_positions array_prepend array_remove array_replace
    array_to_string array_upper cardinality trim_array unnest array_sample array_shuffle
    isempty lower_inc upper_inc lower_inf upper_inf range_merge multirange int4range
    int8range numrange tsrange tstzrange daterange
    generate_series generate_subscripts
    current_catalog current_database current_query current_role current_schema
    current_schemas current_user inet_client_addr inet_client_port inet_server_addr
    inet_server_port pg_backend_pid pg_blocking_pids pg_conf_load_time
    pg_current_logfile pg_my_temp_schema pg_is_other_temp_schema pg_jit_available
    pg_listening_channels pg_notification_queue_usage pg_postmaster_start_time
    pg_safe_snapshot_blocking_pids pg_trigger_depth session_user user version
    has_any_column_privilege has_column_privilege has_database_privilege
    has_foreign_data_wrapper_privilege has_function_privilege has_language_privilege
    has_parameter_privilege has_schema_privilege has_sequence_privilege
    has_server_privilege has_table_privilege has_tablespace_privilege has_type_privilege
    pg_has_role row_security_active acldefault aclexplode makeaclitem
    pg_collation_is_visible pg_conversion_is_visible pg_function_is_visible
    pg_opclass_is_visible pg_operator_is_visible pg_opfamily_is_visible
    pg_statistics_obj_is_visible pg_table_is_visible pg_ts_config_is_visible
    pg_ts_dict_is_visible pg_ts_parser_is_visible pg_ts_template_is_visible
    pg_type_is_visible format_type pg_char_to_encoding pg_encoding_to_char
    pg_get_catalog_foreign_keys pg_get_constraintdef pg_get_expr pg_get_functiondef
    pg_get_function_arguments pg_get_function_identity_arguments pg_get_function_result
    pg_get_indexdef pg_get_keywords pg_get_ruledef pg_get_serial_sequence
    pg_get_statisticsobjdef pg_get_triggerdef pg_get_userbyid pg_get_viewdef
    pg_index_column_has_property pg_index_has_property pg_indexam_has_property
    pg_options_to_table pg_settings_get_flags pg_tablespace_databases
    pg_tablespace_location pg_typeof pg_collation_for to_regclass to_regcollation
    to_regnamespace to_regoper to_regoperator to_regproc to_regprocedure to_regrole
    to_regtype pg_describe_object pg_identify_object pg_identify_object_as_address
    pg_get_object_address col_description obj_description shobj_description
    pg_xact_commit_timestamp pg_last_committed_xact pg_current_snapshot
    pg_snapshot_xip pg_snapshot_xmax pg_snapshot_xmin pg_visible_in_snapshot
    pg_xact_status pg_control_checkpoint pg_control_system pg_control_init
    pg_control_recovery current_setting pg_column_size pg_column_compression
    pg_database_size pg_indexes_size pg_relation_size pg_size_bytes pg_size_pretty
    pg_table_size pg_tablespace_size pg_total_relation_size pg_relation_filenode
    pg_relation_filepath pg_filenode_relation pg_is_in_recovery pg_is_wal_replay_paused
    pg_get_wal_replay_pause_state pg_last_wal_receive_lsn pg_last_wal_replay_lsn
    pg_last_xact_replay_timestamp pg_current_wal_lsn pg_current_wal_insert_lsn
    pg_current_wal_flush_lsn pg_walfile_name pg_walfile_name_offset pg_wal_lsn_diff
    pg_get_backend_memory_contexts pg_stat_get_activity pg_partition_tree
    pg_partition_ancestors pg_partition_root pg_get_partkeydef
    pg_get_partition_constraintdef pg_input_is_valid pg_input_error_info
    bool int2 int4 int8 float4 float8 numeric varchar bpchar date time timestamp
    timestamptz interval regclass regtype oid name uuid
    """
)

# PostgreSQL names parsed by the grammar, not looked up in pg_proc, in every version from 12
# (the adapter keeps only the allowlisted names that pg_catalog of the server defines, plus
# these, so a name the server lacks never resolves to a user function of the same name).
POSTGRES_GRAMMAR = _names(
    """
    cast coalesce greatest least nullif extract position substring trim overlay treat
    normalize current_date current_time current_timestamp localtime localtimestamp
    current_catalog current_role current_schema current_user session_user user
    xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlparse xmlpi xmlroot
    xmlserialize xmltable
    """
)
POSTGRES_GRAMMAR_16 = _names(
    "json_array json_arrayagg json_object json_objectagg json_scalar json_serialize"
)
POSTGRES_GRAMMAR_17 = _names("json_query json_value json_exists json_table")

# PostgreSQL functions that are refused even in field-selection notation, where
# ``x.name`` calls ``name(x)`` (``('/etc/passwd'::text).pg_read_file`` runs): the lexer
# cannot tell that from a column, so names of known side effects are refused outright.
POSTGRES_SIDE_EFFECT_PREFIXES = (
    "pg_advisory",
    "pg_try_advisory",
    "pg_sleep",
    "pg_read_",
    "pg_ls_",
    "pg_stat_file",
    "pg_file_",
    "pg_logdir",
    "lo_",
    "dblink",
    "query_to_xml",
    "cursor_to_xml",
    "table_to_xml",
    "schema_to_xml",
    "database_to_xml",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_switch_",
    "pg_create_",
    "pg_drop_",
    "pg_replication_",
    "pg_logical_",
    "pg_stat_reset",
    "pg_promote",
    "pg_backup_",
    "pg_wal_replay_",
    "pg_log_backend",
    "pg_import_",
    "pg_notify",
    "binary_upgrade_",
    "txid_current",
    "pg_current_xact_id",
    "pg_export_snapshot",
    "set_config",
    "setseed",
    "nextval",
    "setval",
    "lastval",
    "brin_",  # 9.27.8 index maintenance writes
    "gin_clean_pending_list",
    "pg_truncate_",  # pg_visibility
)

# SQLite 3.40+: core, date/time, aggregate, window, math and JSON functions, and the
# introspection table-valued pragmas. Not listed: load_extension, fts3_tokenizer,
# readfile, writefile, edit, zipfile (shell/extension functions).
SQLITE_FUNCTIONS = _names(
    _STANDARD
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
    """
)

# MariaDB 10.11 / MySQL 8 function reference: string, numeric, date and time, aggregate,
# window, control flow, JSON, conversion, information (read-only ones), encryption and
# hashing, miscellaneous. Not listed: LOAD_FILE, SLEEP, BENCHMARK, GET_LOCK and the other
# lock functions, *_POS_WAIT, NEXTVAL/SETVAL/LASTVAL, LAST_INSERT_ID (with an argument it
# sets session state), sys_exec/sys_eval, any stored function.
MYSQL_FUNCTIONS = _names(
    _COMMON
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
    default inet_aton inet_ntoa inet6_aton inet6_ntoa is_ipv4 is_ipv4_compat
    is_ipv4_mapped is_ipv6 name_const uuid uuid_short sys_guid
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
MARIADB_ONLY = _names(
    """
    natural_sort_key sformat to_char sys_guid chr column_check column_create column_exists
    column_get column_json column_list decode_histogram median percentile_cont
    percentile_disc json_detailed json_loose json_compact json_equals json_normalize
    json_exists json_query
    """
)
MYSQL_ONLY = _names(
    """
    regexp_like json_schema_valid any_value bin_to_uuid uuid_to_bin is_uuid format_bytes
    format_pico_time
    json_storage_size json_storage_free icu_version
    """
)

MYSQL_FUNCTIONS |= MYSQL_ONLY

# Stored functions of MySQL's ``sys`` schema that only format or read (``sys.x(...)``).
MYSQL_QUALIFIED = {
    "sys": _names(
        """
        format_bytes format_path format_statement format_time list_add list_drop
        ps_is_account_enabled ps_is_consumer_enabled ps_is_instrument_default_enabled
        ps_is_thread_instrumented ps_thread_account ps_thread_id quote_identifier
        sys_get_config version_major version_minor version_patch
        """
    )
}

# Oracle Database SQL Language Reference, "Functions" (single-row, aggregate, analytic,
# JSON). Not listed: any package call (DBMS_*, UTL_*, HTTPURITYPE ...), which is refused
# unless allowed per alias. Oracle stores names in upper case.
ORACLE_FUNCTIONS = frozenset(
    name.upper()
    for name in _names(
        _COMMON
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
        xmlagg xmlelement xmlforest xmlattributes xmlserialize xmltype
        approx_count_distinct approx_median approx_percentile
        """
    )
)

# Vertica SQL Reference "SQL functions" (aggregate, analytic, date/time, formatting,
# mathematical, string, regular expression, NULL handling, JSON/flex readers). Meta-
# functions (CLOSE_ALL_SESSIONS, EXPORT_OBJECTS, PURGE_TABLE, DO_TM_TASK, ...) are not
# listed: they act on the server, so they are refused.
VERTICA_FUNCTIONS = _names(
    _COMMON
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
