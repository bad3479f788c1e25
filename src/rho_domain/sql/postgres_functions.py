"""The functions a read-only PostgreSQL statement may call (``POSTGRES_FUNCTIONS``, the longest
allowlist, in a module of its own), the prefixes of names with side effects, refused even
without a call (``POSTGRES_SIDE_EFFECT_PREFIXES``), and the system views that read a server
file (``POSTGRES_FILE_VIEWS``). Data only: how the lists are made, and
the names PostgreSQL's grammar parses itself, are ``functions.py``'s.
"""

from __future__ import annotations

from rho_domain.sql.functions import STANDARD, names

# PostgreSQL 15, chapter 9 (functions and operators), plus the catalog-reading helpers of
# 9.26 (system information); like_escape and similar_to_escape (similar_escape before 13),
# pure, are how the server writes LIKE ... ESCAPE and SIMILAR TO back into a view's query,
# which the check judges (a view using them was refused). Not listed (9.27 system
# administration, 9.17 sequences, 9.27.9 file access, 9.27.10 advisory locks, 9.15.4
# query_to_xml & co., ts_rewrite and ts_stat (they run a query given as text),
# pg_input_is_valid and pg_input_error_info (16: they run the input function and CHECK of a
# type named in a string), pg_sleep*, set_config, txid_current*, lo_*, dblink*): refused.
POSTGRES_FUNCTIONS = names(
    STANDARD
    + """
    bool_and bool_or bit_and bit_or bit_xor array_agg string_agg json_agg jsonb_agg
    json_object_agg jsonb_object_agg json_arrayagg json_objectagg xmlagg mode range_agg
    range_intersect_agg any_value
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
    like_escape similar_to_escape similar_escape
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
    pg_get_partition_constraintdef
    bool int2 int4 int8 float4 float8 numeric varchar bpchar date time timestamp
    timestamptz interval regclass regtype oid name uuid
    """
)

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
    "ts_stat",  # ts_stat and ts_rewrite run the query text they are given
    "ts_rewrite",
)

# System views whose rows a function off the allowlist reads from a server file each time
# they are selected: pg_file_settings (pg_show_all_file_settings: postgresql.conf, its
# includes and postgresql.auto.conf, where ALTER SYSTEM keeps primary_conninfo with its
# password), pg_hba_file_rules (pg_hba.conf), pg_ident_file_mappings (15: pg_ident.conf).
# A SELECT names no function, so the check refuses the names themselves, in any position
# (a column of that name is refused too). Views over files of the installation
# (pg_available_extensions: the control files; pg_timezone_names: tzdata) stay readable.
POSTGRES_FILE_VIEWS = frozenset({"pg_file_settings", "pg_hba_file_rules", "pg_ident_file_mappings"})
