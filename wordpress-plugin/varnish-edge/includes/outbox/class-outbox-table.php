<?php
/**
 * The outbox table's schema.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Creates the outbox table of the current site and upgrades it when the schema changes (dbDelta
 * adds missing columns and keys). Rows are read and written by `Outbox_Store`.
 */
class Outbox_Table {

	const DB_VERSION = '2';
	const DB_OPTION  = 'varnish_edge_db_version';

	/**
	 * Table name of the current site.
	 */
	public static function name(): string {
		global $wpdb;
		return $wpdb->prefix . 'varnish_edge_outbox';
	}

	/**
	 * Create or upgrade the table (idempotent; activation hook and plugins_loaded).
	 */
	public static function install(): void {
		global $wpdb;
		require_once ABSPATH . 'wp-admin/includes/upgrade.php';
		$table   = self::name();
		$charset = $wpdb->get_charset_collate();
		dbDelta(
			"CREATE TABLE {$table} (
				id bigint(20) unsigned NOT NULL AUTO_INCREMENT,
				message_id varchar(64) NOT NULL,
				site varchar(253) NOT NULL,
				events longtext NOT NULL,
				event_count int(10) unsigned NOT NULL DEFAULT 0,
				attempts int(10) unsigned NOT NULL DEFAULT 0,
				next_attempt_at bigint(20) unsigned NOT NULL DEFAULT 0,
				locked_until bigint(20) unsigned NOT NULL DEFAULT 0,
				lock_token varchar(40) NOT NULL DEFAULT '',
				last_error text NULL,
				created_at bigint(20) unsigned NOT NULL DEFAULT 0,
				solo tinyint(1) unsigned NOT NULL DEFAULT 0,
				dead_at bigint(20) unsigned NOT NULL DEFAULT 0,
				PRIMARY KEY  (id),
				KEY due (next_attempt_at),
				KEY lock_token (lock_token)
			) {$charset};"
		);
		update_option( self::DB_OPTION, self::DB_VERSION, true );
	}

	/**
	 * Install when the stored schema version is missing or old.
	 */
	public static function maybe_install(): void {
		if ( get_option( self::DB_OPTION ) !== self::DB_VERSION ) {
			self::install();
		}
	}
}
