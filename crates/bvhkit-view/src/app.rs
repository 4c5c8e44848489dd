//! The eframe application: panels, input and painting. All decisions that
//! can be made without a window live in the other modules.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bvhkit::PositionChannels;
use bvhkit_render::glam::DVec3;
use bvhkit_render::{Camera, Clip, Pose, Rgba, Stage, Style, figure_color};
use eframe::egui::{self, Color32, Key, PointerButton, Pos2, Rect, RichText, Sense};

use crate::clock::{Clock, MAX_SPEED, MIN_SPEED};
use crate::load::{Loaded, Prepare, load_path_with};
use crate::paint::{self, ToScreen};
use crate::rig::{self, DEFAULT_AZIMUTH, DEFAULT_ELEVATION, Follow};
use crate::shot::{self, ViewRect};
use crate::timeline::{LoopRange, Timeline};
use crate::{ViewOptions, units::Units};

/// Background of the 3D view: the headless renderer's default.
pub(crate) const BACKGROUND: Rgba = Rgba::rgb(236, 239, 243);

/// Frames drawn before the screenshot is requested (fonts, layout and
/// panel sizes settle during the first ones).
const SHOT_AFTER_FRAMES: u32 = 5;
/// Frames after which screenshot mode gives up.
const SHOT_GIVE_UP_FRAMES: u32 = 600;

/// Hover/click radius around a joint, in points.
const PICK_RADIUS: f32 = 9.0;

type Outcome = Arc<Mutex<Option<Result<(), String>>>>;

struct ShotState {
    path: PathBuf,
    frames: u32,
    /// Key presses still to send, one per drawn frame.
    keys: std::collections::VecDeque<Key>,
    requested: bool,
    image: Arc<Mutex<Option<Arc<egui::ColorImage>>>>,
    /// The sidecar of the latest drawn frame.
    sidecar: Option<serde_json::Value>,
}

pub(crate) struct Player {
    files: Vec<Loaded>,
    errors: Vec<String>,
    mode: PositionChannels,
    prepare: Option<Prepare>,
    in_place: bool,
    stage: Stage,
    timeline: Timeline,
    clock: Clock,
    cam: Camera,
    /// The camera must be framed again (new files, in-place toggle).
    reframe: bool,
    follow: Follow,
    follow_joint: Option<(usize, usize)>,
    selected: Option<(usize, usize)>,
    /// Open the joint tree down to the selected joint (it was picked in
    /// the view).
    reveal: bool,
    style: Style,
    last_time: Option<f64>,
    shot: Option<ShotState>,
    outcome: Outcome,
}

impl Player {
    pub(crate) fn new(
        cc: &eframe::CreationContext<'_>,
        files: Vec<Loaded>,
        errors: Vec<String>,
        options: ViewOptions,
        keys: Vec<Key>,
        outcome: Outcome,
    ) -> Player {
        cc.egui_ctx.set_theme(egui::Theme::Light);
        let mut p = Player {
            files,
            errors,
            mode: options.position_channels,
            prepare: options.prepare.clone(),
            in_place: options.in_place,
            stage: Stage::new(&[]),
            timeline: Timeline::new(&[]),
            clock: Clock::new(0, 1.0 / 30.0),
            cam: Stage::new(&[]).camera(DEFAULT_AZIMUTH, DEFAULT_ELEVATION, 1, 1),
            reframe: true,
            follow: Follow::default(),
            follow_joint: None,
            selected: None,
            reveal: false,
            style: Style::default(),
            last_time: None,
            shot: options.screenshot.map(|path| ShotState {
                path,
                frames: 0,
                keys: keys.into(),
                requested: false,
                image: Arc::default(),
                sidecar: None,
            }),
            outcome,
        };
        p.rebuild();
        if let Some(f) = options.frame {
            p.clock.seek(f);
        }
        if let Some(name) = &options.select {
            p.selected = p.files.iter().enumerate().find_map(|(f, l)| {
                l.clip.joint_names.iter().position(|n| n == name).map(|j| (f, j))
            });
            p.reveal = true;
            if options.follow {
                p.follow_joint = p.selected;
            }
        }
        if options.play && p.shot.is_none() {
            p.clock.play();
        }
        p
    }

    /// Recomputes the stage and timeline after the set of clips changed.
    fn rebuild(&mut self) {
        let clips = shown(&self.files, self.in_place);
        self.stage = Stage::new(&clips);
        let spans: Vec<(usize, f64)> = clips.iter().map(|c| (c.n_frames, c.frame_time)).collect();
        self.timeline = Timeline::new(&spans);
        self.clock.set_timeline(self.timeline.n_frames, self.timeline.frame_time);
        self.reframe = true;
        if let Some((f, j)) = self.follow_joint {
            self.follow.stop();
            if f >= self.files.len() || j >= self.files[f].clip.n_joints() {
                self.follow_joint = None;
            }
        }
    }

    fn open(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        let before = self.files.len();
        for p in paths {
            match load_path_with(&p, self.mode, self.prepare.as_ref()) {
                Ok(l) => self.files.push(l),
                Err(e) => self.errors.push(e),
            }
        }
        if self.files.len() != before {
            self.rebuild();
        }
    }

    /// Each clip's own frame at the current timeline frame.
    fn clip_frames(&self) -> Vec<usize> {
        shown(&self.files, self.in_place)
            .iter()
            .map(|c| self.timeline.clip_frame(self.clock.frame(), c.n_frames, c.frame_time))
            .collect()
    }

    /// World position (stage offset included) of a joint as shown now.
    fn joint_pos(&self, fig: usize, joint: usize) -> Option<DVec3> {
        let clip = self.files.get(fig)?.shown(self.in_place);
        let frame = self.timeline.clip_frame(self.clock.frame(), clip.n_frames, clip.frame_time);
        let p = Pose::at(clip, frame).positions.get(joint).copied()?;
        Some(p + self.stage.offsets().get(fig).copied().unwrap_or_default())
    }

    fn keyboard(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        ctx.input(|i| {
            if i.key_pressed(Key::Space) {
                self.clock.toggle();
            }
            if i.key_pressed(Key::ArrowRight) {
                self.clock.step(1);
            }
            if i.key_pressed(Key::ArrowLeft) {
                self.clock.step(-1);
            }
            if i.key_pressed(Key::Home) {
                self.clock.home();
            }
            if i.key_pressed(Key::End) {
                self.clock.end();
            }
            if i.key_pressed(Key::F) {
                self.reframe = true;
            }
        });
    }

    fn top_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            if ui.button("Open…").on_hover_text("Open BVH files (or drop them here)").clicked()
                && let Some(paths) = rfd::FileDialog::new()
                    .add_filter("BVH", &["bvh", "BVH"])
                    .set_title("Open BVH files")
                    .pick_files()
            {
                self.open(paths);
            }
            if ui.button("Frame all (F)").clicked() {
                self.reframe = true;
            }
            if ui
                .checkbox(&mut self.in_place, "In place")
                .on_hover_text("Remove the root's horizontal travel: the figure walks on the spot")
                .changed()
            {
                self.rebuild();
            }
            ui.checkbox(&mut self.style.grid, "Grid");
            ui.checkbox(&mut self.style.shadows, "Shadows");
            ui.separator();
            match self.follow_joint {
                Some((f, j)) => {
                    let name = self.files[f].clip.joint_names[j].clone();
                    ui.label(format!("Following {name}"));
                    if ui.button("Stop following").clicked() {
                        self.follow_joint = None;
                        self.follow.stop();
                    }
                }
                None => {
                    let can = self.selected.is_some();
                    if ui
                        .add_enabled(can, egui::Button::new("Follow selected joint"))
                        .on_disabled_hover_text("Select a joint in the tree or the view first")
                        .clicked()
                    {
                        self.follow_joint = self.selected;
                        self.follow.stop();
                    }
                }
            }
            ui.separator();
            ui.weak("drag: orbit · right/shift-drag: pan · wheel: zoom · keys: Space, Left/Right, Home/End, F");
        });
    }

    fn transport(&mut self, ui: &mut egui::Ui) {
        let n = self.clock.n_frames();
        ui.horizontal(|ui| {
            if ui.button("|<").on_hover_text("Loop start (Home)").clicked() {
                self.clock.home();
            }
            if ui.button("<").on_hover_text("Previous frame (Left arrow)").clicked() {
                self.clock.step(-1);
            }
            let label = if self.clock.is_playing() { "Pause" } else { "Play" };
            if ui.button(label).on_hover_text("Space").clicked() {
                self.clock.toggle();
            }
            if ui.button(">").on_hover_text("Next frame (Right arrow)").clicked() {
                self.clock.step(1);
            }
            if ui.button(">|").on_hover_text("Loop end (End)").clicked() {
                self.clock.end();
            }
            let mut looping = self.clock.is_looping();
            if ui.checkbox(&mut looping, "Loop").changed() {
                self.clock.set_looping(looping);
            }
            let mut speed = self.clock.speed();
            if ui
                .add(
                    egui::Slider::new(&mut speed, MIN_SPEED..=MAX_SPEED)
                        .logarithmic(true)
                        .text("speed")
                        .suffix("x")
                        .max_decimals(2),
                )
                .changed()
            {
                self.clock.set_speed(speed);
            }
            if ui.small_button("1x").clicked() {
                self.clock.set_speed(1.0);
            }
            ui.separator();
            let f = self.clock.frame();
            ui.monospace(format!(
                "frame {f:>5} / {}   {:7.3} s   {:.1} fps",
                n.saturating_sub(1),
                self.timeline.seconds(f),
                self.timeline.fps()
            ));
        });
        ui.horizontal(|ui| {
            let mut f = self.clock.frame();
            ui.spacing_mut().slider_width = (ui.available_width() - 90.0).max(100.0);
            let last = n.saturating_sub(1);
            if ui.add_enabled(n > 1, egui::Slider::new(&mut f, 0..=last).text("frame")).changed() {
                self.clock.seek(f);
            }
        });
        ui.horizontal(|ui| {
            let r = self.clock.range();
            let (mut a, mut b) = (r.start(), r.end());
            let last = n.saturating_sub(1);
            ui.label("Loop range");
            let ca = ui.add(egui::DragValue::new(&mut a).range(0..=last).prefix("in ")).changed();
            let cb = ui.add(egui::DragValue::new(&mut b).range(0..=last).prefix("out ")).changed();
            let mut range = r;
            if ca {
                range.set_start(a, n);
            }
            if cb {
                range.set_end(b, n);
            }
            if ui.button("Set in here").clicked() {
                range.set_start(self.clock.frame(), n);
            }
            if ui.button("Set out here").clicked() {
                range.set_end(self.clock.frame(), n);
            }
            if ui.button("Whole clip").clicked() {
                range = LoopRange::full(n);
            }
            if range != r {
                self.clock.set_range(range);
            }
            ui.weak(format!(
                "{} frames, {:.2} s",
                range.len(),
                range.len() as f64 * self.timeline.frame_time
            ));
        });
    }

    fn side_panel(&mut self, ui: &mut egui::Ui) {
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            self.inspector(ui);
            ui.separator();
            if !self.errors.is_empty() {
                ui.label(RichText::new("Could not open").strong().color(Color32::DARK_RED));
                for e in &self.errors {
                    ui.label(RichText::new(e).small().color(Color32::DARK_RED));
                }
                if ui.small_button("Clear").clicked() {
                    self.errors.clear();
                }
                ui.separator();
            }
            let frames = self.clip_frames();
            let mut select = None;
            for (i, file) in self.files.iter().enumerate() {
                let c = paint::color(figure_color(i));
                let title = RichText::new(file.clip.name.as_str()).color(c).strong();
                egui::CollapsingHeader::new(title).id_salt(("file", i)).default_open(true).show(
                    ui,
                    |ui| {
                        ui.weak(format!(
                            "{} joints · {} frames · {:.1} fps · frame {}",
                            file.clip.n_joints(),
                            file.clip.n_frames,
                            1.0 / file.clip.frame_time,
                            frames.get(i).copied().unwrap_or(0)
                        ));
                        let shown = match file.units.units {
                            Units::Unknown => format!(", shown scaled ×{:.4}", file.display_scale),
                            _ => ", shown in metres".to_string(),
                        };
                        ui.weak(format!("units: {}{shown}", file.units.label()));
                        if !file.warnings.is_empty() {
                            let head = RichText::new(match file.warnings.len() {
                                1 => "1 warning".to_string(),
                                n => format!("{n} warnings"),
                            })
                            .color(Color32::from_rgb(180, 100, 0));
                            egui::CollapsingHeader::new(head)
                                .id_salt(("warn", i))
                                .default_open(true)
                                .show(ui, |ui| {
                                    for w in &file.warnings {
                                        ui.label(RichText::new(w).small());
                                    }
                                });
                        }
                        let clip = &file.clip;
                        let mut children = vec![Vec::new(); clip.n_joints()];
                        let mut roots = Vec::new();
                        for (j, p) in clip.parents.iter().enumerate() {
                            match p {
                                Some(p) if *p < j => children[*p].push(j),
                                _ => roots.push(j),
                            }
                        }
                        // Ancestors of the selected joint to open, if asked.
                        let mut open = vec![false; clip.n_joints()];
                        if self.reveal
                            && let Some((f, j)) = self.selected
                            && f == i
                        {
                            let mut k = clip.parents.get(j).copied().flatten();
                            while let Some(p) = k.filter(|p| *p < open.len() && !open[*p]) {
                                open[p] = true;
                                k = clip.parents[p];
                            }
                        }
                        let tree = JointTree { fig: i, clip, children: &children, open: &open };
                        for r in roots {
                            tree.show(ui, r, 0, self.selected, &mut select);
                        }
                    },
                );
            }
            self.reveal = false;
            if let Some(s) = select {
                self.selected = Some(s);
            }
        });
    }

    fn inspector(&mut self, ui: &mut egui::Ui) {
        ui.heading("Joint");
        let Some((f, j)) = self.selected else {
            ui.weak("Click a joint in the view or the tree.");
            return;
        };
        let Some(file) = self.files.get(f) else { return };
        let frame =
            self.timeline.clip_frame(self.clock.frame(), file.clip.n_frames, file.clip.frame_time);
        let unit = match file.units.units {
            Units::Unknown => String::new(),
            u => format!(" {}", u.symbol()),
        };
        ui.label(RichText::new(&file.clip.joint_names[j]).strong());
        ui.weak(format!("in {} · frame {frame}", file.clip.name));
        egui::Grid::new("channels").num_columns(2).striped(true).show(ui, |ui| {
            let values = file.channel_values(j, frame);
            if values.is_empty() {
                ui.weak("no channels");
                ui.end_row();
            }
            for (name, v) in values {
                ui.monospace(name);
                let suffix =
                    if name.ends_with("rotation") { "°".to_string() } else { unit.clone() };
                ui.monospace(format!("{v:>10.4}{suffix}"));
                ui.end_row();
            }
        });
        if let Some(p) = Pose::at(&file.clip, frame).positions.get(j) {
            ui.label("World position (file units)");
            ui.monospace(format!("{:.3}  {:.3}  {:.3}{unit}", p.x, p.y, p.z));
        }
        if ui.button("Follow").clicked() {
            self.follow_joint = Some((f, j));
            self.follow.stop();
        }
    }

    fn view(&mut self, ui: &mut egui::Ui) {
        let rect = ui.available_rect_before_wrap();
        let response = ui.allocate_rect(rect, Sense::click_and_drag());
        let ppp = ui.ctx().pixels_per_point();
        let (w, h) = ((rect.width() * ppp).round() as u32, (rect.height() * ppp).round() as u32);
        self.cam.set_viewport(w.max(1), h.max(1));
        if self.reframe {
            self.cam = rig::frame_all(&self.stage, &self.cam);
            self.reframe = false;
            self.follow.stop();
        }
        // Mouse: orbit, pan, zoom.
        let shift = ui.input(|i| i.modifiers.shift);
        let d = response.drag_delta() * ppp;
        if response.dragged_by(PointerButton::Primary) && !shift {
            rig::drag_orbit(&mut self.cam, f64::from(d.x), f64::from(d.y));
        } else if response.dragged_by(PointerButton::Secondary)
            || response.dragged_by(PointerButton::Middle)
            || (response.dragged_by(PointerButton::Primary) && shift)
        {
            self.cam.pan(f64::from(d.x), f64::from(d.y));
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                rig::scroll_zoom(&mut self.cam, f64::from(scroll));
            }
        }
        if let Some((f, j)) = self.follow_joint
            && let Some(p) = self.joint_pos(f, j)
        {
            self.follow.update(&mut self.cam, p);
        }

        let frames = self.clip_frames();
        let clips = shown(&self.files, self.in_place);
        let poses: Vec<Pose<'_>> =
            clips.iter().zip(&frames).map(|(c, f)| Pose::at(c, *f)).collect();
        let style = Style { highlight: self.selected, ..self.style.clone() };
        let list = self.stage.draw_list(&self.cam, &poses, &style);
        let t = ToScreen { origin: rect.min, pixels_per_point: ppp };
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, paint::color(BACKGROUND));
        painter.extend(paint::shapes(&list, t));

        if clips.is_empty() {
            painter.text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "Drop BVH files here, or use Open…",
                egui::FontId::proportional(20.0),
                Color32::from_gray(90),
            );
        }

        // Hover: name the nearest joint; click selects it.
        let pick = if self.shot.is_none() {
            response.hover_pos().and_then(|pos| self.pick(&clips, &frames, t, pos))
        } else {
            None
        };
        if let Some((f, j, at)) = pick {
            let text = format!("{} · {}", clips[f].name, clips[f].joint_names[j]);
            let galley = painter.layout_no_wrap(
                text,
                egui::FontId::proportional(14.0),
                Color32::from_gray(20),
            );
            let pos = at + egui::vec2(12.0, -22.0);
            let bg = Rect::from_min_size(pos, galley.size()).expand(4.0);
            painter.rect_filled(bg, 4.0, Color32::from_white_alpha(230));
            painter.galley(pos, galley, Color32::from_gray(20));
            if response.clicked() {
                self.selected = Some((f, j));
                self.reveal = true;
            }
        } else if response.clicked() {
            self.selected = None;
        }
        let dropping = ui.input(|i| !i.raw.hovered_files.is_empty());
        if dropping {
            painter.rect_filled(rect, 0.0, Color32::from_rgba_unmultiplied(40, 110, 200, 40));
        }

        if let Some(shot) = &mut self.shot {
            let view = ViewRect {
                x: f64::from(rect.min.x * ppp),
                y: f64::from(rect.min.y * ppp),
                width: f64::from(w),
                height: f64::from(h),
            };
            let screen = ui.ctx().content_rect().size() * ppp;
            let pairs: Vec<(&Clip, usize)> =
                clips.iter().copied().zip(frames.iter().copied()).collect();
            shot.sidecar = Some(shot::sidecar(
                &self.stage,
                &self.cam,
                &pairs,
                self.clock.frame(),
                view,
                [screen.x.round() as usize, screen.y.round() as usize],
                BACKGROUND,
            ));
            if let Some(obj) = shot.sidecar.as_mut().and_then(|v| v.as_object_mut()) {
                obj.insert("playing".into(), self.clock.is_playing().into());
                obj.insert("errors".into(), self.errors.clone().into());
            }
            // Each clip's unit guess, as `bvh serve` sends it in clips.json.
            if let Some(list) = shot.sidecar.as_mut().and_then(|v| v["clips"].as_array_mut()) {
                for (c, file) in list.iter_mut().zip(&self.files) {
                    let u = &file.units;
                    c["units"] = serde_json::json!({
                        "symbol": u.units.symbol(),
                        "label": u.label(),
                        "size": u.size,
                        "metres_per_unit": u.metres_per_unit(),
                        "drawn_size_m": u.drawn_size_m(),
                    });
                }
            }
        }
    }

    /// The joint drawn nearest to `pos` (within [`PICK_RADIUS`]), with its
    /// screen position.
    fn pick(
        &self,
        clips: &[&Clip],
        frames: &[usize],
        t: ToScreen,
        pos: Pos2,
    ) -> Option<(usize, usize, Pos2)> {
        let mut best: Option<(f32, usize, usize, Pos2)> = None;
        for (f, clip) in clips.iter().enumerate() {
            let off = self.stage.offsets().get(f).copied().unwrap_or_default();
            for (j, p) in Pose::at(clip, frames[f]).positions.iter().enumerate() {
                let Some((x, y, _)) = self.cam.project(*p + off) else { continue };
                let at = t.pos(bvhkit_render::glam::Vec2::new(x as f32, y as f32));
                let d = at.distance(pos);
                if d <= PICK_RADIUS && best.is_none_or(|b| d < b.0) {
                    best = Some((d, f, j, at));
                }
            }
        }
        best.map(|(_, f, j, at)| (f, j, at))
    }

    /// Screenshot mode: request the picture once the first frames are
    /// drawn, then save it with its sidecar and close.
    fn screenshot(&mut self, ctx: &egui::Context) {
        let Some(shot) = &mut self.shot else { return };
        shot.frames += 1;
        ctx.request_repaint();
        let image = shot.image.lock().ok().and_then(|mut i| i.take());
        if let Some(image) = image {
            let result = save_shot(&shot.path, &image, shot.sidecar.as_ref());
            if let Ok(mut o) = self.outcome.lock() {
                *o = Some(result);
            }
            self.shot = None;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if shot.frames >= SHOT_AFTER_FRAMES && shot.keys.is_empty() && !shot.requested {
            shot.requested = true;
            let slot = Arc::clone(&shot.image);
            let repaint = ctx.clone();
            ctx.request_screenshot(move |img| {
                if let Ok(mut s) = slot.lock() {
                    *s = Some(img);
                }
                repaint.request_repaint();
            });
        }
        if shot.frames >= SHOT_GIVE_UP_FRAMES {
            if let Ok(mut o) = self.outcome.lock() {
                *o = Some(Err("no screenshot arrived from the window system".into()));
            }
            self.shot = None;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}

/// The clips as shown (in place or not), one per open file.
fn shown(files: &[Loaded], in_place: bool) -> Vec<&Clip> {
    files.iter().map(|f| f.shown(in_place)).collect()
}

fn save_shot(
    path: &Path,
    image: &egui::ColorImage,
    sidecar: Option<&serde_json::Value>,
) -> Result<(), String> {
    let [w, h] = image.size;
    let rgba: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_srgba_unmultiplied()).collect();
    shot::write_png(path, w as u32, h as u32, &rgba)?;
    let sidecar = sidecar.ok_or("no frame was drawn")?;
    let json = serde_json::to_string_pretty(sidecar).map_err(|e| e.to_string())?;
    let side = shot::sidecar_path(path);
    shot::write_file(&side, |w| w.write_all(json.as_bytes()))
}

struct JointTree<'a> {
    fig: usize,
    clip: &'a Clip,
    children: &'a [Vec<usize>],
    /// Joints to force open.
    open: &'a [bool],
}

impl JointTree<'_> {
    fn show(
        &self,
        ui: &mut egui::Ui,
        j: usize,
        depth: usize,
        selected: Option<(usize, usize)>,
        select: &mut Option<(usize, usize)>,
    ) {
        let name = &self.clip.joint_names[j];
        let is_sel = selected == Some((self.fig, j));
        let label = if self.clip.is_end_site[j] {
            RichText::new(name).italics().weak()
        } else {
            RichText::new(name)
        };
        if self.children[j].is_empty() {
            ui.horizontal(|ui| {
                ui.add_space(ui.spacing().indent);
                if ui.selectable_label(is_sel, label).clicked() {
                    *select = Some((self.fig, j));
                }
            });
            return;
        }
        let id = ui.make_persistent_id(("joint", self.fig, j));
        let mut state = egui::collapsing_header::CollapsingState::load_with_default_open(
            ui.ctx(),
            id,
            depth < 3,
        );
        if self.open.get(j).copied().unwrap_or(false) {
            state.set_open(true);
        }
        state
            .show_header(ui, |ui| {
                if ui.selectable_label(is_sel, label).clicked() {
                    *select = Some((self.fig, j));
                }
            })
            .body(|ui| {
                for &c in &self.children[j] {
                    self.show(ui, c, depth + 1, selected, select);
                }
            });
    }
}

impl eframe::App for Player {
    /// Screenshot mode: sends the scripted key presses, one per frame, as
    /// the window system would.
    fn raw_input_hook(&mut self, _ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        let Some(shot) = &mut self.shot else { return };
        if shot.frames == 0 {
            return;
        }
        if let Some(key) = shot.keys.pop_front() {
            for pressed in [true, false] {
                raw_input.events.push(egui::Event::Key {
                    key,
                    physical_key: Some(key),
                    pressed,
                    repeat: false,
                    modifiers: egui::Modifiers::NONE,
                });
            }
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        // Files dropped on the window.
        let dropped: Vec<PathBuf> =
            ctx.input(|i| i.raw.dropped_files.iter().map(|f| f.path().to_path_buf()).collect());
        if !dropped.is_empty() {
            self.open(dropped);
        }
        // Real-time playback.
        let now = ctx.input(|i| i.time);
        let dt = self.last_time.map_or(0.0, |t| now - t);
        self.last_time = Some(now);
        self.keyboard(&ctx);
        // Screenshot mode shows a fixed moment: the clock does not run.
        if self.shot.is_none() {
            self.clock.advance(dt);
        }
        if self.clock.is_playing() {
            ctx.request_repaint();
        }

        egui::Panel::top("bar").show(ui, |ui| self.top_bar(ui));
        egui::Panel::bottom("transport").show(ui, |ui| self.transport(ui));
        egui::Panel::left("joints").default_size(260.0).show(ui, |ui| self.side_panel(ui));
        egui::CentralPanel::no_frame().show(ui, |ui| self.view(ui));

        self.screenshot(&ctx);
    }
}
