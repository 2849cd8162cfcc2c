<?php
/**
 * Site scope, the purger URL's network-admin rule and uninstall on a real subdirectory multisite
 * network (tests/support/Multisite.php: the same WordPress and MariaDB, table prefix ms_, main
 * site http://ms.test/, sub-site http://ms.test/sub/, each scenario a PHP process loaded as a
 * request to that site).
 */
class MultisiteTest extends VE_TestCase {

	/** Whole-site purges of a sub-site are a ban on its own path, never on the shared host. */
	public function test_sub_site_purge_whole_site_is_scoped_to_its_path() {
		$report = Multisite::run(
			'/sub/',
			'
			add_filter( "wp_redirect", static function ( $to ) { throw new RuntimeException( "redirect" ); }, 1 );
			wp_set_current_user( $ve["subadmin"] );
			$p     = \VarnishEdge\Plugin::instance();
			$admin = new \VarnishEdge\Admin_Page( $p->settings, $p->outbox, $p->delivery, $p->queue, $p->manual, $p->live_log, $p->live );
			$_GET  = $_REQUEST = array( "scope" => "all", "_wpnonce" => wp_create_nonce( "varnish_edge_purge_all" ) );
			try {
				$admin->handle_purge(); // The admin bar "Purge whole site" link, as the sub-site administrator.
			} catch ( RuntimeException $e ) {
			}
			$p->queue->dispatch();
			// Every other whole-site purge of the sub-site (theme switch, collapse, dead letter) goes through the outbox.
			$p->outbox->enqueue( \VarnishEdge\Settings::site_host( home_url() ), array( \VarnishEdge\Event_Builder::all_event( "theme switched", time() ) ) );
			$p->delivery->process( true );
			return array(
				"blog"    => get_current_blog_id(),
				"home"    => home_url( "/" ),
				"super"   => is_super_admin(),
				"pending" => $p->outbox->stats()["rows"],
			);
			'
		);
		$this->assertSame( 2, $report['blog'] );
		$this->assertSame( 'http://ms.test/sub/', $report['home'] );
		$this->assertFalse( $report['super'] );
		$this->assertSame( 0, $report['pending'] );

		// The admin bar purge also asked for its receipts (POST /v1/receipts, which the receiver does not answer).
		$hooks = array_values( array_filter( Environment::webhooks(), static fn( $hook ) => '/v1/events' === $hook['path'] ) );
		$this->assertCount( 2, $hooks );
		foreach ( $hooks as $hook ) {
			$this->assertSame( 202, $hook['status'] );
			$this->assertSame( 'ms.test', $hook['body']['site'] );
		}
		$events = Environment::accepted_events();
		$this->assertSame( array( 'prefix', 'prefix' ), array_column( $events, 'kind' ), 'never kind "all" (a ban on the whole host)' );
		$this->assertSame( array( 'http://ms.test/sub/' ), $this->sent_urls( 'prefix' ) );
		$this->assertStringContainsString( 'manual purge of the whole site by subadmin', $events[0]['reason'] );

		// The main site's whole site is its host (its path prefix "/" covers everything anyway).
		Environment::clear_webhooks();
		Multisite::run(
			'/',
			'
			$p = \VarnishEdge\Plugin::instance();
			$p->queue->add( $p->manual->all( "admin" ) );
			$p->queue->commit();
			$p->delivery->process( true );
			return get_current_blog_id();
			'
		);
		$this->assertSame( array( 'all' ), array_column( Environment::accepted_events(), 'kind' ) );
	}

	/** Sub-site administrators cannot point the purger URL anywhere; network administrators can. */
	public function test_only_network_admins_change_the_purger_url() {
		$report = Multisite::run(
			'/sub/',
			'
			$settings = new \VarnishEdge\Settings();
			$page     = new \VarnishEdge\Admin_Page( $settings, \VarnishEdge\Plugin::instance()->outbox, \VarnishEdge\Plugin::instance()->delivery, \VarnishEdge\Plugin::instance()->queue, \VarnishEdge\Plugin::instance()->manual, \VarnishEdge\Plugin::instance()->live_log, \VarnishEdge\Plugin::instance()->live );
			$before   = $settings->stored()["purger_url"];
			$out      = array( "before" => $before );

			wp_set_current_user( $ve["subadmin"] );
			$GLOBALS["wp_settings_errors"] = array();
			$r = $settings->sanitize( array( "purger_url" => "http://10.0.0.5:6379", "namespace" => "subns" ) );
			$out["sub_url"]    = $r["purger_url"];
			$out["sub_ns"]     = $r["namespace"];
			$out["sub_errors"] = wp_list_pluck( get_settings_errors( \VarnishEdge\Settings::OPTION ), "message" );
			$GLOBALS["wp_settings_errors"] = array();
			$r = $settings->sanitize( array( "purger_url" => $before, "ttl" => "3600" ) );
			$out["sub_same_url_errors"] = count( get_settings_errors( \VarnishEdge\Settings::OPTION ) );
			ob_start();
			$page->render_field( array( "name" => "purger_url" ) );
			$out["sub_field"] = ob_get_clean();

			wp_set_current_user( 1 );
			$GLOBALS["wp_settings_errors"] = array();
			$r = $settings->sanitize( array( "purger_url" => "http://purger.internal:8090" ) );
			$out["super_url"]    = $r["purger_url"];
			$out["super_errors"] = count( get_settings_errors( \VarnishEdge\Settings::OPTION ) );
			ob_start();
			$page->render_field( array( "name" => "purger_url" ) );
			$out["super_field"] = ob_get_clean();
			return $out;
			'
		);
		$this->assertSame( Environment::purger_url(), $report['before'] );
		$this->assertSame( Environment::purger_url(), $report['sub_url'], 'a sub-site administrator cannot change it' );
		$this->assertSame( 'subns', $report['sub_ns'], 'the other fields still save' );
		$this->assertCount( 1, $report['sub_errors'] );
		$this->assertStringContainsString( 'Only network administrators can change the purger URL', $report['sub_errors'][0] );
		$this->assertSame( 0, $report['sub_same_url_errors'], 'saving the form unchanged is no error' );
		$this->assertStringContainsString( 'readonly', $report['sub_field'] );
		$this->assertStringContainsString( 'Only network administrators', $report['sub_field'] . implode( '', $report['sub_errors'] ) );
		$this->assertSame( 'http://purger.internal:8090', $report['super_url'] );
		$this->assertSame( 0, $report['super_errors'] );
		$this->assertStringNotContainsString( 'readonly', $report['super_field'] );
	}

	/** uninstall.php removes every site's outbox table and options, and the network options. */
	public function test_uninstall_removes_every_sites_table_and_options() {
		$report = Multisite::run(
			'/',
			'
			global $wpdb;
			foreach ( get_sites( array( "fields" => "ids" ) ) as $blog ) {
				switch_to_blog( $blog );
				\VarnishEdge\Outbox_Table::install();
				update_option( \VarnishEdge\Outbox_Delivery::STATUS_OPTION, array( "last_success" => time() ) );
				wp_schedule_single_event( time() + 600, \VarnishEdge\Outbox_Delivery::CRON_HOOK );
				wp_schedule_single_event( time() + 600, "varnish_edge_later_feature" );
				set_transient( "varnish_edge_notice_1", array( "success", "x" ), 120 );
				update_option( "varnish_edge_later_feature", 1 );
				restore_current_blog();
			}
			update_site_option( "varnish_edge_settings", array( "purger_url" => "http://purger:8090" ) );
			$count = static function () use ( $wpdb ) {
				$out = array( "tables" => $wpdb->get_col( "SHOW TABLES LIKE \"ms\\_%varnish\\_edge\\_outbox\"" ) );
				foreach ( get_sites( array( "fields" => "ids" ) ) as $blog ) {
					switch_to_blog( $blog );
					$out["options"][ $blog ] = (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$wpdb->options} WHERE option_name LIKE \"%varnish\\_edge\\_%\"" );
					$out["cron"][ $blog ]    = wp_next_scheduled( \VarnishEdge\Outbox_Delivery::CRON_HOOK ) || wp_next_scheduled( "varnish_edge_later_feature" );
					restore_current_blog();
				}
				$out["network"] = (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$wpdb->sitemeta} WHERE meta_key LIKE \"varnish\\_edge\\_%\"" );
				return $out;
			};
			$before = $count();
			define( "WP_UNINSTALL_PLUGIN", "varnish-edge/varnish-edge.php" );
			require dirname( \VarnishEdge\PLUGIN_FILE ) . "/uninstall.php";
			wp_cache_flush();
			return array( "before" => $before, "after" => $count() );
			'
		);
		$before = $report['before'];
		$this->assertSame( array( 'ms_2_varnish_edge_outbox', 'ms_varnish_edge_outbox' ), $before['tables'] );
		$this->assertGreaterThanOrEqual( 6, $before['options'][1], 'settings, status, schema, a later option, a transient and its timeout' );
		$this->assertGreaterThanOrEqual( 6, $before['options'][2] );
		$this->assertSame( array( 1 => true, 2 => true ), $before['cron'] );
		$this->assertSame( 1, $before['network'] );

		$after = $report['after'];
		$this->assertSame( array(), $after['tables'], 'no site keeps its outbox table' );
		$this->assertSame( array( 1 => 0, 2 => 0 ), $after['options'], 'no site keeps its settings (secrets), status, other options or transients' );
		$this->assertSame( array( 1 => false, 2 => false ), $after['cron'] );
		$this->assertSame( 0, $after['network'] );
	}
}
